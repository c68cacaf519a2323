package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// writePlot draws the sweep: one panel per stream, maximum normalized rank
// error against serialized bytes, log–log, one line per sketch. A zero
// error is drawn at 1/(2N), below every non-zero error.
func writePlot(path string, r *report) error {
	var streams []string
	for _, p := range r.sweep {
		if !slices.Contains(streams, p.Stream) {
			streams = append(streams, p.Stream)
		}
	}
	if len(streams) == 0 {
		return fmt.Errorf("no sweep to plot")
	}
	var plots []*plot.Plot
	for _, st := range streams {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, N = %d", st, r.sweepSize[st])
		p.X.Label.Text = "serialized bytes (t-digest: 16 B per centroid)"
		p.Y.Label.Text = "max normalized rank error"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.Add(plotter.NewGrid())
		p.Legend.Top, p.Legend.Left = false, true
		p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(8)
		p.Legend.TextStyle.Font.Size = vg.Points(11)
		p.Title.TextStyle.Font.Size = vg.Points(13)
		p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(11), vg.Points(11)
		p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(10), vg.Points(10)
		floor := 0.5 / float64(r.sweepSize[st])
		xmin, xmax := math.Inf(1), math.Inf(-1)
		for _, q := range r.sweep {
			if q.Stream == st {
				xmin, xmax = min(xmin, float64(q.Bytes)), max(xmax, float64(q.Bytes))
			}
		}
		for i, s := range sketchNames {
			var xy plotter.XYs
			for _, q := range r.sweep {
				if q.Stream == st && q.Sketch == s {
					xy = append(xy, plotter.XY{X: float64(q.Bytes), Y: max(q.MaxRankErr, floor)})
				}
			}
			if len(xy) == 0 {
				continue
			}
			slices.SortFunc(xy, func(a, b plotter.XY) int {
				switch {
				case a.X < b.X:
					return -1
				case a.X > b.X:
					return 1
				}
				return 0
			})
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			c := plotutil.Color(i)
			l.Color, pts.Color = c, c
			l.Width = vg.Points(1.5)
			pts.Shape = plotutil.Shape(i)
			pts.Radius = vg.Points(3)
			p.Add(l, pts)
			name := s
			if s == nameStreamd {
				name = "streamd (GK part)"
			}
			p.Legend.Add(name, l, pts)
		}
		eps, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: r.opts.Epsilon}, {X: xmax, Y: r.opts.Epsilon}})
		if err != nil {
			return err
		}
		eps.Color = color.Gray{Y: 120}
		eps.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(eps)
		p.Legend.Add(fmt.Sprintf("ε = %g", r.opts.Epsilon), eps)
		plots = append(plots, p)
	}
	const w, h = 7 * vg.Inch, 5 * vg.Inch
	img := vgimg.New(w*vg.Length(len(plots)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(12), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6)}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
