package replica

import (
	"context"
	"errors"
)

func (r *Remote) scanAgentUse(ctx context.Context, out map[string]*local, warns *[]Warning) error {
	return nil
}

func (r *Remote) auSession(ctx context.Context, m mode, name string, loc *local, h *head, old *sessionState) (SessionReport, *sessionState, error) {
	return SessionReport{}, old, errors.New("not yet")
}
