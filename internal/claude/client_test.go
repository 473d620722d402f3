package claude

import "testing"

func TestClientVersion(t *testing.T) {
	for _, c := range []struct {
		out, want string
		ok        bool
	}{
		{"2.1.330 (Claude Code)\n", "2.1.330", true},
		{"2.2.0", "2.2.0", true},
		{"", "", false},
		{"claude: not found", "", false},
		{"2.1 (Claude Code)", "", false},
	} {
		got, ok := ClientVersion(c.out)
		if got != c.want || ok != c.ok {
			t.Errorf("ClientVersion(%q) = %q, %v; want %q, %v", c.out, got, ok, c.want, c.ok)
		}
	}
}

func TestNewerThanProven(t *testing.T) {
	for v, want := range map[string]bool{
		ProvenClaudeVersion: false,
		"2.1.329":           false,
		"2.1.331":           true,
		"2.2.0":             true,
		"3.0.0":             true,
		"1.9.999":           false,
		"garbage":           false,
	} {
		if got := NewerThanProven(v); got != want {
			t.Errorf("NewerThanProven(%q) = %v, want %v", v, got, want)
		}
	}
}
