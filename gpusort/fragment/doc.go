// Package fragment holds the sorting networks of the 2005 papers drawn
// with texture mapping and GL_MIN/GL_MAX blending on an RGBA32F texture
// (Sorter): the periodic balanced sorting network ("pbsn", NewPBSN) and
// the cache-efficient bitonic network ("bitonic", NewBitonic).
//
// It implements gpusort's Sorter and Digester on a GL context of package
// glctx, sorting float64 batches and digesting on gpusort's CPU back-end.
// Everything but this comment is built only with the "gpu" build tag.
package fragment
