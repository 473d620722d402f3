// Package editdist measures how far apart two short strings are, for "did you mean"
// suggestions: a project name, a command, a flag.
package editdist

// maxLen bounds the strings compared in full: longer ones are as far apart as the
// longer is long, so a pasted paragraph costs nothing.
const maxLen = 64

// Distance is the Levenshtein edit distance between a and b, counted in bytes: the
// insertions, deletions and substitutions that turn one into the other.
func Distance(a, b string) int {
	if len(a) > maxLen || len(b) > maxLen {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
