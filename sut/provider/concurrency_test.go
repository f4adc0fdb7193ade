package provider_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

func TestConcurrent_SameKeyChargesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := provider.New(provider.Config{
			BeforeCommit: func(*http.Request) { time.Sleep(time.Second) }, // virtual
		})
		raw := body(t, visa)
		const n = 8
		results := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				w := httptest.NewRecorder()
				p.ServeHTTP(w, newPost(`"same-key"`, raw))
				results[i] = w
			})
		}
		wg.Wait()

		require.Len(t, p.Charges(), 1)
		var created *httptest.ResponseRecorder
		for _, w := range results {
			if w.Code == http.StatusCreated && w.Header().Get(models.ReplayedHeader) == "" {
				require.Nil(t, created, "two first answers for one key")
				created = w
			}
		}
		require.NotNil(t, created)
		for _, w := range results {
			switch {
			case w == created:
			case w.Code == http.StatusConflict:
			default:
				assert.Equal(t, created.Code, w.Code)
				assert.Equal(t, created.Body.Bytes(), w.Body.Bytes())
			}
		}
	})
}

func TestProcess_SurvivesCancelledClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := provider.New(provider.Config{BeforeCommit: func(*http.Request) { cancel() }})
	w := httptest.NewRecorder()
	p.ServeHTTP(w, newPost(`"k"`, body(t, visa)).WithContext(ctx))
	require.Error(t, ctx.Err())
	decodeCharge(t, w)
	assert.Len(t, p.Charges(), 1)
}
