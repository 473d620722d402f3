package guard

import "strings"

// Class is one built-in rule class: the id a Verdict reports and what it refuses.
type Class struct {
	Rule    string `json:"rule"`
	Refuses string `json:"refuses"`
}

// Classes are the built-in rule classes, in the order the package documents them.
// config-deny is not among them: it stands for the workspace's own patterns.
var Classes = []Class{
	{ruleRmRoot, "rm -r of / or /*"},
	{ruleRmNoPreserveRoot, "rm --no-preserve-root, whatever the target"},
	{ruleRmHome, "rm -r of the home folder or all of its contents"},
	{ruleRmWorkspace, "rm -r of the workspace root or all of its contents"},
	{ruleRmParent, "rm -r of a folder that holds the workspace or the home folder"},
	{ruleRmSystem, "rm -r of a system folder such as /usr, /etc or /var/lib"},
	{ruleRmSystemContents, "rm -r of a folder directly in a system folder (/etc/nginx, /var/log, /var/lib/postgresql) or of anything in a folder of programs (/usr/local/bin/x)"},
	{ruleRmHomeContents, "rm -r of a folder directly in the home folder (~/.ssh, ~/Documents), or of another user's home, but for caches"},
	{ruleRmGitDir, "rm -r of the .git folder of the repository the command works in"},
	{ruleRmProjects, "rm -r of the projects folder, a project in it, a planning folder, or all their contents"},
	{ruleRmUnsetVar, "rm -r of a path that a variable the command never sets would collapse to a protected folder"},
	{ruleFindDelete, "find -delete or find -exec rm over a protected or project folder, unless limited to generated files"},
	{ruleXargsRm, "xargs rm fed paths the guard cannot see, or by a find that find-delete refuses"},
	{ruleGitForcePush, "a forced push to main or master, or to a branch the guard cannot see"},
	{ruleGitDeleteMain, "a push that deletes the remote main or master"},
	{ruleGitResetHard, "git reset --hard over uncommitted changes"},
	{ruleGitClean, "git clean -f over uncommitted changes"},
	{ruleGitCheckoutDiscard, "git checkout -f, or of the whole tree, over uncommitted changes"},
	{ruleGitRestoreDiscard, "git restore of the whole working tree over uncommitted changes"},
	{ruleGitSwitchDiscard, "git switch -f or --discard-changes over uncommitted changes"},
	{ruleGitStashDrop, "git stash drop or clear"},
	{ruleGitWorktreeRemove, "git worktree remove --force of a worktree with uncommitted changes"},
	{ruleGitBranchDelete, "git branch -D of a branch whose commits no other branch, tag or remote holds"},
	{ruleOverwriteInPlace, "shred; truncate in the workspace or home; > or tee onto a save point, plan, config, .env or ~/.ssh file"},
	{ruleChmodRecursive, "chmod -R over /, a system folder, home, the workspace or the projects folder"},
	{ruleChownRecursive, "chown -R or chgrp -R over the same folders"},
	{rulePipeToShell, "a download run by a shell unread: curl URL | sh, bash <(curl URL)"},
	{ruleSQLDrop, "DROP DATABASE, TABLE or SCHEMA sent to a SQL client"},
	{ruleSQLTruncate, "TRUNCATE sent to a SQL client"},
	{ruleSQLDeleteAll, "DELETE without WHERE sent to a SQL client"},
	{ruleDBDrop, "dropdb, mysqladmin drop, a Mongo shell's dropDatabase()"},
	{ruleRedisFlush, "redis-cli FLUSHALL or FLUSHDB"},
	{ruleDockerVolume, "docker volume rm or prune, docker system prune --volumes, docker compose down -v"},
	{ruleRsyncDelete, "rsync --delete into the workspace, the projects folder, a project, home or a system folder"},
	{ruleMkfs, "making a filesystem (mkfs, mkfs.*, mke2fs and the like)"},
	{ruleDdDevice, "dd of=/dev/... other than /dev/null and its kin"},
	{ruleDeviceWrite, "a redirection or tee onto a disk device"},
	{ruleForkBomb, "a function that spawns copies of itself in a pipe or in the background"},
	{ruleTooDeep, "scripts nested inside strings beyond what the guard will parse"},
	{ruleUnjudgeable, "a command that does not parse, or is too large or too deeply nested to parse safely"},
}

// RuleConfigDeny is the rule a Verdict names when a Config.Deny pattern refused the
// command.
const RuleConfigDeny = ruleConfigDeny

// Denies returns the deny patterns in force, as their words joined by single spaces,
// with their reasons: the valid entries of the Config given to New.
func (r *Rules) Denies() []DenyRule {
	out := make([]DenyRule, 0, len(r.deny))
	for _, d := range r.deny {
		out = append(out, DenyRule{Pattern: d.source, Reason: d.reason})
	}
	return out
}

// Allows returns the allow entries in force, word by word joined by single spaces, with
// ~ and $HOME resolved.
func (r *Rules) Allows() []string {
	out := make([]string, 0, len(r.allow))
	for _, words := range r.allow {
		out = append(out, strings.Join(words, " "))
	}
	return out
}
