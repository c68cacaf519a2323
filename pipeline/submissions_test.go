//go:build !gpu

package pipeline

import "streamd/gpusort"

// submissions reports false: without the gpu build tag no sorter counts
// GL submissions.
func submissions(gpusort.Digester) (subs, windows int64, ok bool) { return 0, 0, false }
