package driver

// CheckOutcome is what an op's checks (see the check package) found in
// one operation's results: set by Op.Inspect, read by the recorder. Bit i
// stands for the op's check i (an op has at most MaxChecks). A list op's
// checks run on each page: a check fails the op when it fails on any page.
//
// The zero value means no check ran (an op without checks, or an answer
// without a result: an RPC or transport error, counted as an error). A
// passing result sets bits only, so checks that pass allocate nothing;
// a failure records the value seen, for the report's example.
type CheckOutcome struct {
	Ran    uint64 // bit i: check i was evaluated
	Failed uint64 // bit i: check i failed (on at least one page)
	// Seen holds, for each failed check i, the value it saw (Seen[i],
	// short, e.g. `"" (empty)` or `isError true`); nil until a check
	// fails. Owned by the Result: Reset drops it.
	Seen []string
}

// MaxChecks is the most checks one op may carry (the bits of a uint64).
const MaxChecks = 64

// Fail records check i failing with the value seen (the first failure of
// a check per result keeps its value).
func (c *CheckOutcome) Fail(i int, seen string) {
	bit := uint64(1) << uint(i)
	c.Ran |= bit
	if c.Failed&bit != 0 {
		return
	}
	c.Failed |= bit
	if len(c.Seen) <= i {
		c.Seen = append(c.Seen, make([]string, i+1-len(c.Seen))...)
	}
	c.Seen[i] = seen
}

// Pass records check i passing (a failure on another page stands).
func (c *CheckOutcome) Pass(i int) { c.Ran |= uint64(1) << uint(i) }
