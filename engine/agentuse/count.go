package agentuse

import "context"

// Count counts the sessions below the store's directory, subagents
// included, as Sessions yields them (a damaged session counts). What
// Sessions passes over goes to skip and the count goes on; ctx done
// ends it with ctx's error.
func (s *Store) Count(ctx context.Context, skip func(error)) (int, error) {
	n := 0
	for x, err := range s.Sessions(ctx) {
		if x == nil {
			if ctx.Err() != nil {
				return 0, err
			}
			skip(err)
			continue
		}
		n++
	}
	return n, nil
}
