package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// repeatable is a string flag that may be given several times (each value kept, in order). A
// cli.StringSliceFlag would also split values at commas, and a path may hold one.
type repeatable struct{ values []string }

func (r *repeatable) Set(v string) error { r.values = append(r.values, v); return nil }
func (r *repeatable) String() string     { return strings.Join(r.values, ", ") }

// repeated returns the values of a repeatable flag.
func repeated(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeatable); ok && r != nil {
		return slices.Clone(r.values)
	}
	return nil
}
