package guard

import (
	"fmt"
	"slices"
	"strings"
)

// Presets guard what lies outside the machine: clusters, cloud accounts, registries and
// package indexes. They are off by default, since such commands are often the work
// itself, and switched on by name in .ctx/config.yaml (guard.presets: [kubernetes,
// cloud]). Each refuses with its own rule id, preset-NAME.

// Preset is one set of rules a workspace can switch on.
type Preset struct {
	Name    string `json:"name"`
	Refuses string `json:"refuses"`
}

// Presets are the presets there are, in the order `ctx guard rules` lists them.
var Presets = []Preset{
	{"kubernetes", "kubectl delete of a namespace, of --all, or of volumes; helm uninstall"},
	{"cloud", "terraform/tofu destroy and apply -destroy, pulumi destroy, aws s3 rm --recursive and rb --force, aws … delete-* and terminate-instances, gcloud … delete, az … delete, doctl … delete"},
	{"registries", "deleting images from a registry: crane delete, skopeo delete, regctl image delete, aws ecr batch-delete-image, docker manifest rm"},
	{"publishing", "publishing or withdrawing packages: npm/pnpm/yarn publish and unpublish, cargo publish and yank, twine upload, gem push and yank, poetry publish, mvn deploy, goreleaser release"},
}

// checkPresets checks the command args (wrappers stripped) against the presets the
// workspace switched on.
func (c *checker) checkPresets(args []arg, text string) {
	if len(c.rules.presets) == 0 || len(args) == 0 || !args[0].known {
		return
	}
	name := commandName(args[0].s)
	words := presetWords(args[1:])
	on := func(p string) bool { return slices.Contains(c.rules.presets, p) }
	has := func(w ...string) bool {
		for _, x := range w {
			if slices.Contains(words, x) {
				return true
			}
		}
		return false
	}
	flag := func(w ...string) bool {
		for _, a := range args[1:] {
			for _, x := range w {
				if a.known && (a.s == x || strings.HasPrefix(a.s, x+"=")) {
					return true
				}
			}
		}
		return false
	}
	deny := func(preset, what string) {
		c.deny("preset-"+preset, "Refused "+text+": "+what+", and this workspace's guard.presets includes "+preset+"; ask the user to run it.")
	}
	switch {
	case on("kubernetes") && (name == "kubectl" || name == "oc") && has("delete"):
		switch {
		case has("namespace", "namespaces", "ns"):
			deny("kubernetes", "it deletes a Kubernetes namespace with everything in it")
		case flag("--all", "-A", "--all-namespaces"):
			deny("kubernetes", "it deletes every resource of a kind")
		case has("pv", "pvc", "persistentvolume", "persistentvolumes", "persistentvolumeclaim", "persistentvolumeclaims"):
			deny("kubernetes", "it deletes persistent volumes and the data on them")
		}
	case on("kubernetes") && name == "helm" && len(words) > 0 && (words[0] == "uninstall" || words[0] == "delete" || words[0] == "del"):
		deny("kubernetes", "it uninstalls a Helm release and what it created")
	case on("cloud") && (name == "terraform" || name == "tofu" || name == "terragrunt") && len(words) > 0 &&
		(words[0] == "destroy" || words[0] == "apply" && flag("-destroy", "--destroy")):
		deny("cloud", "it destroys the infrastructure the state holds")
	case on("cloud") && name == "pulumi" && len(words) > 0 && (words[0] == "destroy" || words[0] == "down"):
		deny("cloud", "it destroys the stack's resources")
	case on("cloud") && name == "aws" && len(words) >= 2:
		switch {
		case words[0] == "s3" && words[1] == "rm" && flag("--recursive"),
			words[0] == "s3" && words[1] == "rb" && flag("--force"):
			deny("cloud", "it deletes the objects of an S3 bucket")
		case strings.HasPrefix(words[1], "delete-") || words[1] == "terminate-instances" || words[1] == "deregister-image":
			deny("cloud", "it deletes cloud resources ("+words[0]+" "+words[1]+")")
		}
	case on("cloud") && (name == "gcloud" || name == "az" || name == "doctl") && has("delete"):
		deny("cloud", "it deletes cloud resources")
	case on("registries") && (name == "crane" || name == "skopeo") && len(words) > 0 && words[0] == "delete",
		on("registries") && name == "regctl" && len(words) > 1 && words[1] == "delete",
		on("registries") && name == "aws" && len(words) > 1 && words[0] == "ecr" && (words[1] == "batch-delete-image" || words[1] == "delete-repository"),
		on("registries") && (name == "docker" || name == "podman") && len(words) > 1 && words[0] == "manifest" && words[1] == "rm":
		deny("registries", "it deletes images from a registry, which everyone who pulls them depends on")
	case on("publishing") && (name == "npm" || name == "pnpm" || name == "yarn" || name == "bun") && (has("publish", "unpublish", "deprecate") && !flag("--dry-run")),
		on("publishing") && name == "cargo" && len(words) > 0 && (words[0] == "publish" && !flag("--dry-run") || words[0] == "yank"),
		on("publishing") && name == "twine" && len(words) > 0 && words[0] == "upload",
		on("publishing") && name == "gem" && len(words) > 0 && (words[0] == "push" || words[0] == "yank"),
		on("publishing") && name == "poetry" && len(words) > 0 && words[0] == "publish" && !flag("--dry-run"),
		on("publishing") && (name == "mvn" || name == "./mvnw") && has("deploy"),
		on("publishing") && name == "goreleaser" && len(words) > 0 && words[0] == "release" && !flag("--snapshot"):
		deny("publishing", "it publishes (or withdraws) a package for everyone who installs it, which cannot be taken back")
	}
}

// presetWords are the words of args that are not options, as the presets read a
// command's subcommands; an option's value may be among them, which costs nothing here.
func presetWords(args []arg) []string {
	var out []string
	for _, a := range args {
		if a.known && !strings.HasPrefix(a.s, "-") {
			out = append(out, a.s)
		}
	}
	return out
}

// checkPresetNames keeps the presets that exist and reports the others.
func checkPresetNames(names []string, key string) ([]string, error) {
	var out []string
	var bad []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if slices.ContainsFunc(Presets, func(p Preset) bool { return p.Name == n }) {
			out = append(out, n)
		} else {
			bad = append(bad, fmt.Sprintf("%q", n))
		}
	}
	if len(bad) > 0 {
		names := make([]string, len(Presets))
		for i, p := range Presets {
			names[i] = p.Name
		}
		return out, fmt.Errorf("%s.presets: unknown preset %s; the presets are %s", key, strings.Join(bad, ", "), strings.Join(names, ", "))
	}
	return out, nil
}

// Presets returns the presets in force.
func (r *Rules) Presets() []string { return slices.Clone(r.presets) }
