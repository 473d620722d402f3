package loader

import (
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	for name, want := range map[string]string{
		"Checkout Redesign: Phase 2!": "checkout-redesign-phase-2",
		"Ünïcødé 名前":                  "ünïcødé-名前",
		"  --Spaces--  ":              "spaces",
		"!!!":                         "",
		strings.Repeat("a", 60):       strings.Repeat("a", maxSlug),
	} {
		if got := Slug(name); got != want {
			t.Errorf("Slug(%q) = %q, want %q", name, got, want)
		}
	}
}
