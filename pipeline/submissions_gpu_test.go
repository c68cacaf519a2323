//go:build gpu

package pipeline

import (
	"streamd/gpusort"
	"streamd/gpusort/compute"
)

// submissions reports the GL submissions a compute sorter has made and
// the windows they carried, and whether s counts them.
func submissions(s gpusort.Digester) (subs, windows int64, ok bool) {
	c, ok := s.(*compute.Sorter)
	if !ok {
		return 0, 0, false
	}
	st := c.Stats()
	return st.Submissions, st.Windows, true
}
