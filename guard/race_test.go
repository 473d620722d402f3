//go:build race

package guard

// raceEnabled: the race detector slows the guard several times over, and the time
// bounds of the large-input tests allow for it.
const raceEnabled = true
