package wiremock_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/wiremock"
)

func TestAmendTakesTheWiresRecord(t *testing.T) {
	const k = `"01a1d96c-e23d-77bf-801e-9df969c1d378"`
	exs := []models.Exchange{
		{ID: 1, Method: "POST", KeyHeader: k, HasKey: true},
		{ID: 2, Method: "POST", KeyHeader: k, HasKey: true}, // dropped: not in the journal
	}
	j := []wiremock.Entry{{Exchange: 1, Method: "POST", KeyHeader: k, HasKey: true, Status: 201}}
	if err := wiremock.Amend(exs, j); err != nil {
		t.Fatal(err)
	}
	if !exs[0].Journaled || exs[0].ProviderStatus != 201 || exs[0].Key != "01a1d96c-e23d-77bf-801e-9df969c1d378" {
		t.Errorf("journaled exchange not amended: %+v", exs[0])
	}
	if exs[1].Journaled {
		t.Errorf("an exchange WireMock never saw is marked journaled: %+v", exs[1])
	}
}

func TestAmendRefusesDisagreement(t *testing.T) {
	for name, e := range map[string]wiremock.Entry{
		"another key":      {Exchange: 1, KeyHeader: `"01a1d96c-e23d-77bf-801e-9df969c1d379"`, HasKey: true},
		"key missing":      {Exchange: 1},
		"bare, not quoted": {Exchange: 1, KeyHeader: "01a1d96c-e23d-77bf-801e-9df969c1d378", HasKey: true},
	} {
		exs := []models.Exchange{{ID: 1, Method: "POST", KeyHeader: `"01a1d96c-e23d-77bf-801e-9df969c1d378"`, HasKey: true}}
		err := wiremock.Amend(exs, []wiremock.Entry{e})
		if err == nil || !strings.Contains(err.Error(), "WireMock's journal says") {
			t.Errorf("%s: Amend = %v, want a disagreement", name, err)
		}
	}
}

func TestAmendRefusesHiddenResendsAndStrangers(t *testing.T) {
	const k = `"01a1d96c-e23d-77bf-801e-9df969c1d378"`
	exs := func() []models.Exchange {
		return []models.Exchange{{ID: 1, Method: "POST", KeyHeader: k, HasKey: true}}
	}
	twice := []wiremock.Entry{{Exchange: 1, KeyHeader: k, HasKey: true, Status: 201}, {Exchange: 1, KeyHeader: k, HasKey: true, Status: 404}}
	if err := wiremock.Amend(exs(), twice); err == nil || !strings.Contains(err.Error(), "reached WireMock twice") {
		t.Errorf("one exchange in the journal twice: Amend = %v", err)
	}
	stranger := []wiremock.Entry{{Exchange: 7, KeyHeader: k, HasKey: true}}
	if err := wiremock.Amend(exs(), stranger); err == nil || !strings.Contains(err.Error(), "does not") {
		t.Errorf("a journal entry the history does not hold: Amend = %v", err)
	}
}
