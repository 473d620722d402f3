package guard

import (
	"path"
	"strings"
)

// The rules of this file keep the data of the machine's own services and the person's
// folders: databases, caches and volumes that a command empties for good, and the
// folders ctx already protects from rm, which rsync --delete can empty as surely.

// isCacheName reports folders directly in home that hold only what tools download or
// build again: deleting one is routine cleanup. (A switch, not a map: the package
// builds nothing at start.)
func isCacheName(name string) bool {
	switch name {
	case ".npm", ".yarn", ".pnpm-store", ".bun", ".gradle", ".m2", ".ivy2", ".nuget", ".node-gyp",
		".Trash", "tmp", ".tmp", "node_modules", ".venv", "venv", "__pycache__", ".vscode-server", ".cursor-server":
		return true
	}
	return strings.Contains(strings.ToLower(name), "cache")
}

// homeContentsTarget reports the folder directly in the home folder (or the other
// user's home folder) that deleting target destroys, and what it is; "" when it is
// neither, or when it is a cache.
func (c *checker) homeContentsTarget(target string, sc *scope) (string, string) {
	p := holder(target)
	if p == "" {
		return "", ""
	}
	abs := sc.abs(p)
	if abs == "" || strings.ContainsAny(abs, "*?[") {
		return "", ""
	}
	home := c.rules.env.Home
	if home != "" && path.Dir(abs) == home {
		name := path.Base(abs)
		if isCacheName(name) {
			return "", ""
		}
		if ws := c.rules.env.Workspace; ws != "" && (abs == ws || strings.HasPrefix(ws, abs+"/")) {
			return "", "" // the workspace's own rules say more
		}
		return abs, "a folder of your home (" + name + ")"
	}
	if dir := path.Dir(abs); (dir == "/home" || dir == "/Users") && abs != home && (home == "" || !strings.HasPrefix(home, abs+"/")) {
		if path.Base(abs) == "Shared" && dir == "/Users" {
			return abs, "the shared folder of every user"
		}
		return abs, "another user's home folder"
	}
	return "", ""
}

// systemContentsTarget reports the part of the system deleting target destroys: a
// folder directly in one of the system's own folders (/etc/nginx, /var/log,
// /var/lib/postgresql, /usr/lib/x86_64-linux-gnu), or anything in a folder of programs
// (/usr/local/bin/tool). Scratch and caches (/var/tmp, /var/cache) and what lies deeper
// (/var/lib/apt/lists/*, /usr/local/go, /opt/app) are not: reinstalling and cleaning up
// delete there every day.
func (c *checker) systemContentsTarget(target string, sc *scope) string {
	p := holder(target)
	if p == "" {
		return ""
	}
	abs := sc.abs(p)
	if abs == "" || strings.ContainsAny(abs, "*?[") || abs == "/" {
		return ""
	}
	dir := path.Dir(abs)
	switch dir {
	case "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin":
		return abs
	case "/etc", "/boot", "/lib", "/lib64", "/usr", "/usr/lib", "/usr/lib64", "/usr/share", "/var", "/var/lib":
		switch abs {
		case "/var/tmp", "/var/cache", "/var/folders", "/usr/src", "/usr/tmp":
			return ""
		}
		return abs
	}
	return ""
}

// gitDirTarget reports the .git folder deleting target destroys when it is the history
// of the repository the command works in: the .git of the working folder, of one of
// its parents, or of the workspace. A .git below (a vendored copy's) is not.
func (c *checker) gitDirTarget(target string, sc *scope) string {
	p := holder(target)
	if p == "" || path.Base(p) != ".git" {
		return ""
	}
	abs := sc.abs(p)
	if abs == "" {
		return ""
	}
	repo := path.Dir(abs)
	for _, d := range []string{sc.cwd, c.rules.env.Workspace} {
		if d != "" && (d == repo || strings.HasPrefix(d, repo+"/")) {
			return abs
		}
	}
	return ""
}

// isLocalData reports the commands localData judges.
func isLocalData(name string) bool {
	switch name {
	case "dropdb", "mysqladmin", "mariadb-admin", "redis-cli", "valkey-cli", "keydb-cli", "mongosh", "mongo",
		"docker-compose", "podman-compose", "rsync":
		return true
	}
	return false
}

// localData dispatches the commands that empty a local service's data.
func (c *checker) localData(name string, args []arg, sc *scope, text string) {
	switch name {
	case "dropdb":
		if operands(args[1:], "cdhpUw") != nil {
			c.deny(ruleDBDrop, "Refused "+text+": dropdb deletes a PostgreSQL database with all its data; back it up first (pg_dump) and ask the user to drop it.")
		}
	case "mysqladmin", "mariadb-admin":
		for _, a := range operands(args[1:], "hPSuUpcCiOw") {
			if s := strings.ToLower(a.s); s == "drop" {
				c.deny(ruleDBDrop, "Refused "+text+": mysqladmin drop deletes a database with all its data; back it up first (mysqldump) and ask the user to drop it.")
				return
			}
		}
	case "redis-cli", "valkey-cli", "keydb-cli":
		for _, a := range operands(args[1:], "hpsaunrilcde") {
			if s := strings.ToUpper(a.s); s == "FLUSHALL" || s == "FLUSHDB" {
				c.deny(ruleRedisFlush, "Refused "+text+": "+s+" deletes every key of the Redis server (or database) for good; delete the keys you mean by name (DEL, or UNLINK with --scan --pattern), or ask the user.")
				return
			}
		}
	case "mongosh", "mongo":
		for _, a := range args[1:] {
			if a.known && (strings.Contains(a.s, "dropDatabase(") || strings.Contains(a.s, ".drop(")) {
				c.deny(ruleDBDrop, "Refused "+text+": the script drops a MongoDB database or collection with all its documents; export it first (mongodump) and ask the user.")
				return
			}
		}
	case "docker-compose", "podman-compose":
		c.composeDown(args[1:], text)
	case "rsync":
		c.rsyncDelete(args, sc, text)
	}
}

// operands returns the words of args that are not options, skipping the value of each
// short option in withValue (attached or as the next word). A word the guard cannot
// read (an expansion) counts as an operand: `dropdb "$DB"` drops a database too.
func operands(args []arg, withValue string) []arg {
	var out []arg
	opts := true
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case !a.known:
			out = append(out, a)
		case opts && a.s == "--":
			opts = false
		case opts && strings.HasPrefix(a.s, "--"):
			if !strings.Contains(a.s, "=") && j+1 < len(args) && longTakesValue(a.s) {
				j++
			}
		case opts && len(a.s) > 1 && a.s[0] == '-':
			if last := a.s[len(a.s)-1:]; strings.Contains(withValue, last) && len(a.s) == 2 {
				j++
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

// longTakesValue knows the long options of the database clients above that take the
// next word as their value.
func longTakesValue(opt string) bool {
	switch strings.TrimLeft(opt, "-") {
	case "host", "port", "username", "user", "password", "dbname", "maintenance-db", "socket", "pass", "user-name":
		return true
	}
	return false
}

// dockerData refuses removing volumes: docker volume rm and prune, docker system prune
// --volumes, and docker compose down -v.
func (c *checker) dockerData(args []arg, text string) {
	words := operands(args[1:], "cH")
	if len(words) == 0 {
		return
	}
	switch words[0].s {
	case "volume":
		if len(words) > 1 && (words[1].s == "rm" || words[1].s == "remove" || words[1].s == "prune") {
			c.deny(ruleDockerVolume, "Refused "+text+": it deletes Docker volumes, and with them the databases and uploads they hold; list them with `docker volume ls`, and ask the user which may go.")
		}
	case "system":
		if len(words) > 1 && words[1].s == "prune" && hasFlag(args, "volumes", 0) {
			c.deny(ruleDockerVolume, "Refused "+text+": --volumes deletes every volume no container uses, with the data it holds; run `docker system prune` without it, or ask the user.")
		}
	case "compose":
		for i, a := range args {
			if a.known && a.s == "compose" {
				c.composeDown(args[i+1:], text)
				return
			}
		}
	}
}

// composeDown refuses docker compose down -v (--volumes): the project's named volumes go
// with it.
func (c *checker) composeDown(args []arg, text string) {
	words := operands(args, "fp")
	if len(words) == 0 || words[0].s != "down" {
		return
	}
	if hasFlag(args, "volumes", 'v') {
		c.deny(ruleDockerVolume, "Refused "+text+": -v deletes the project's volumes, and with them its databases; run `docker compose down` without -v, or ask the user.")
	}
}

// hasFlag reports whether args hold --long, or the short letter in a group of short
// options (0 for none).
func hasFlag(args []arg, long string, short byte) bool {
	for _, a := range args {
		if !a.known || len(a.s) < 2 || a.s[0] != '-' {
			continue
		}
		if a.s == "--" {
			return false
		}
		if strings.HasPrefix(a.s, "--") {
			if name, _, _ := strings.Cut(a.s[2:], "="); name == long {
				return true
			}
			continue
		}
		if short != 0 && strings.IndexByte(a.s[1:], short) >= 0 {
			return true
		}
	}
	return false
}

// rsyncDelete refuses rsync --delete (and its kin) whose destination is a folder rm -r
// may not delete: the workspace, the projects folder, a project, home, a system folder.
// Files there that the source lacks would be deleted.
func (c *checker) rsyncDelete(args []arg, sc *scope, text string) {
	del := false
	for _, a := range args[1:] {
		if a.known && (strings.HasPrefix(a.s, "--delete") || a.s == "--del") {
			del = true
		}
	}
	if !del {
		return
	}
	ops := operands(args[1:], "eBfT")
	if len(ops) < 2 {
		return
	}
	dest := ops[len(ops)-1]
	if !dest.known {
		return // a destination the guard cannot read, as rm's operands
	}
	if strings.Contains(dest.s, ":") && !strings.HasPrefix(dest.s, "/") && !strings.HasPrefix(dest.s, ".") {
		return // another machine's folder: not this one's to judge
	}
	target := strings.TrimSuffix(dest.s, "/")
	if target == "" {
		target = "/"
	}
	p, rule := c.protectedTarget(target, sc)
	if rule == "" {
		if pp, kind := c.projectsTarget(target, sc); kind != "" {
			p = pp
		} else if pp, _ := c.homeContentsTarget(target, sc); pp != "" {
			p = pp
		} else if pp := c.systemContentsTarget(target, sc); pp != "" {
			p = pp
		}
	}
	if p != "" {
		c.deny(ruleRsyncDelete, "Refused "+text+": --delete removes every file in "+p+" that the source lacks, and that folder is one rm -r may not delete either; sync into a new or build folder, drop --delete, or run it with --dry-run first and ask the user.")
	}
}
