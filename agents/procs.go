package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Marked returns the pids of this user's processes whose environment carries
// CTX_AGENT_ID=id: the agent's claude, its shells, and children that left the process
// group (setsid, nohup) but kept the environment. Linux only (/proc); elsewhere none.
func Marked(id string) []int { return MarkedAll()[id] }

// MarkedAll is Marked for every agent at once, by agent id: one pass over /proc,
// each process's environment read once (a dashboard asks for all its agents every
// two seconds).
func MarkedAll() map[string][]int {
	key := []byte(EnvAgentID + "=")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	uid := os.Getuid()
	out := map[string][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if !ownedBy(info, uid) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if id, ok := bytes.CutPrefix(kv, key); ok && len(id) > 0 {
				out[string(id)] = append(out[string(id)], pid)
				break
			}
		}
	}
	return out
}

// RSSKB is the resident memory of the processes, in kB.
func RSSKB(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				f := strings.Fields(rest)
				if len(f) > 0 {
					n, _ := strconv.ParseInt(f[0], 10, 64)
					total += n
				}
			}
		}
	}
	return total
}

// EndMarked ends every process carrying the agent's marker: SIGTERM, then SIGKILL to
// those still there after grace. It returns how many it found first and the pids still
// alive at the end (none, normally).
func EndMarked(id string, grace time.Duration) (found int, left []int) {
	pids := Marked(id)
	found = len(pids)
	for _, pid := range pids {
		terminate(pid)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if len(alive(pids)) == 0 {
			return found, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range alive(pids) {
		kill(pid)
	}
	time.Sleep(100 * time.Millisecond)
	return found, alive(Marked(id))
}

func alive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if exists(pid) && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// pidAlive reports whether a process with pid exists (a ctx process that recorded an
// operation).
func pidAlive(pid int) bool {
	return pid > 0 && exists(pid) && !zombie(pid)
}
