// Package hosts holds the other machines a person runs agents on, and runs ctx there
// over the system ssh: the person's ~/.ssh/config, keys, agents, ProxyJump, Tailscale
// SSH or a Coder workspace alias work as they do for ssh itself. The host list is the
// person's own, in the workspace's untracked state (.ctx/state/hosts.json), never in a
// file that would travel with the repository. Nothing here listens: every remote
// operation is `ssh HOST ctx … --json`, host-local on the other side.
package hosts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
)

// Local is the name of this machine in every listing.
const Local = "local"

// Host is one machine agents run on.
type Host struct {
	Name string `json:"name"`
	// Destination is what ssh is given: an alias of ~/.ssh/config, user@host,
	// ssh://user@host:port.
	Destination string `json:"destination"`
	// Workspace is the workspace's path on the host.
	Workspace string `json:"workspace"`
	// Ctx is the ctx command there: "ctx" on its PATH unless set.
	Ctx     string    `json:"ctx,omitempty"`
	AddedAt time.Time `json:"added_at"`
}

// CtxCommand is the ctx to run on the host.
func (h Host) CtxCommand() string {
	if h.Ctx != "" {
		return h.Ctx
	}
	return "ctx"
}

var (
	nameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`) })
	// An ssh destination: [ssh://][user@]host[:port], host a name, an IPv4 or a
	// bracketed IPv6 address. Never an option (a leading '-'), never a space.
	destRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(ssh://)?([A-Za-z0-9._][A-Za-z0-9._-]*@)?([A-Za-z0-9_][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.%A-Za-z]+\])(:[0-9]{1,5})?$`)
	})
)

// CheckName validates a host's name: lower-case letters, digits and '-', up to 32,
// and not "local".
func CheckName(name string) error {
	if name == Local {
		return fmt.Errorf("host %q: that name is this machine's", name)
	}
	if !nameRe().MatchString(name) {
		return fmt.Errorf("host %q: use lower-case letters, digits and - (up to 32, not starting with -)", name)
	}
	return nil
}

// CheckDestination validates what ssh is given.
func CheckDestination(dest string) error {
	if !destRe().MatchString(dest) || strings.HasPrefix(dest, "-") {
		return fmt.Errorf("ssh destination %q: use an ssh alias, user@host or ssh://user@host:port", dest)
	}
	return nil
}

// CheckRemotePath validates a path on the host: absolute, clean, printable.
func CheckRemotePath(p string) error {
	if !path.IsAbs(p) || path.Clean(p) != p {
		return fmt.Errorf("remote path %q: give an absolute, clean path", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("remote path %q: control characters are not allowed", p)
		}
	}
	return nil
}

// Check validates every field of h.
func (h Host) Check() error {
	err := errors.Join(CheckName(h.Name), CheckDestination(h.Destination), CheckRemotePath(h.Workspace))
	if h.Ctx != "" && !strings.HasPrefix(h.Ctx, "/") && h.Ctx != "ctx" {
		err = errors.Join(err, fmt.Errorf("--ctx %q: the ctx command there: an absolute path, or ctx on its PATH", h.Ctx))
	}
	if h.Ctx != "" && h.Ctx != "ctx" {
		err = errors.Join(err, CheckRemotePath(h.Ctx))
	}
	return err
}

// NotFoundError is a host name that is not in the list.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no host %q (ctx hosts list; ctx hosts add %s DESTINATION)", e.Name, e.Name)
}

// Set is a workspace's host list.
type Set struct {
	path string
}

// Open is the host list of a workspace (no file is touched until a change).
func Open(ws *loader.Workspace) *Set {
	return &Set{path: ws.StatePath("state", "hosts.json")}
}

type file struct {
	SchemaVersion int    `json:"schema_version"`
	Hosts         []Host `json:"hosts"`
}

// All returns the hosts, by name.
func (s *Set) All() ([]Host, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	var out []Host
	for _, h := range f.Hosts {
		if err := h.Check(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Get returns the host called name.
func (s *Set) Get(name string) (*Host, error) {
	all, err := s.All()
	if err != nil {
		return nil, err
	}
	for _, h := range all {
		if h.Name == name {
			return &h, nil
		}
	}
	return nil, &NotFoundError{Name: name}
}

// Add adds h; a host of that name already there is an error.
func (s *Set) Add(h Host) error {
	if err := h.Check(); err != nil {
		return err
	}
	return s.update(func(hosts []Host) ([]Host, error) {
		for _, o := range hosts {
			if o.Name == h.Name {
				return nil, fmt.Errorf("host %q is already there (%s); ctx hosts rm %s first", h.Name, o.Destination, h.Name)
			}
		}
		return append(hosts, h), nil
	})
}

// Update changes the host called name.
func (s *Set) Update(name string, change func(*Host)) error {
	return s.update(func(hosts []Host) ([]Host, error) {
		for i := range hosts {
			if hosts[i].Name == name {
				change(&hosts[i])
				return hosts, hosts[i].Check()
			}
		}
		return nil, &NotFoundError{Name: name}
	})
}

// Remove removes the host called name.
func (s *Set) Remove(name string) error {
	return s.update(func(hosts []Host) ([]Host, error) {
		for i, h := range hosts {
			if h.Name == name {
				return append(hosts[:i], hosts[i+1:]...), nil
			}
		}
		return nil, &NotFoundError{Name: name}
	})
}

// update changes the list under a lock, re-read inside it.
func (s *Set) update(change func([]Host) ([]Host, error)) error {
	if err := loader.EnsureStateDir(filepath.Dir(s.path)); err != nil {
		return err
	}
	return durable.WithLock(context.Background(), s.path, func() error {
		hosts, err := s.All()
		if err != nil {
			return err
		}
		hosts, err = change(hosts)
		if err != nil {
			return err
		}
		data, err := json.MarshalIndent(file{SchemaVersion: 1, Hosts: hosts}, "", "  ")
		if err != nil {
			return err
		}
		return durable.ReplaceFile(s.path, append(data, '\n'), 0o600)
	})
}
