package driver

import "errors"

// ErrMissingValue: a request was not sent because a value its arguments
// read from an earlier result is missing (the earlier request failed, or
// its result has no such value): a caller correlating requests, such as
// workload's scenario steps ({{step "list" "tools.0.name"}}), fails the
// request with an error wrapping it, class ClassMissingValue.
var ErrMissingValue = errors.New("missing value from an earlier step")
