package summary

import (
	"errors"
	"testing"

	"streamd/hhh"
)

func TestConfigHierarchy(t *testing.T) {
	c := Config{Hierarchy: "ipv4"}.WithDefaults()
	if c.Hierarchy != "ipv4/8" || !c.Items || !c.Float64 {
		t.Fatalf("WithDefaults of hierarchy ipv4 = %+v, want ipv4/8, an item stream with float64", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v", c, err)
	}
	for _, bad := range []string{"ipv4/7", "nope", "delim:"} {
		err := Config{Hierarchy: bad}.WithDefaults().Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "hierarchy" || !errors.Is(err, hhh.ErrHierarchy) {
			t.Errorf("Validate of hierarchy %q = %v, want a ConfigError of field hierarchy wrapping hhh.ErrHierarchy", bad, err)
		}
	}
	c.Items = false
	if err := c.Validate(); err == nil {
		t.Errorf("Validate of a hierarchy value stream = nil, want an error")
	}
}
