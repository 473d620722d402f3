// Package torture is ctx's crash-and-load suite: real ctx processes run many at once
// over a generated workspace, some killed with SIGKILL a few milliseconds after they
// start, and a checker then proves that nothing acknowledged was lost and nothing on
// disk is half written. It runs behind the torture build tag (`make torture`); see
// README.md in this folder.
package torture
