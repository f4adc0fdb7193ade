package main_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// action is the part of action.yml a local run reads.
type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Steps []struct {
			Name             string            `yaml:"name"`
			ID               string            `yaml:"id"`
			Uses             string            `yaml:"uses"`
			Run              string            `yaml:"run"`
			Shell            string            `yaml:"shell"`
			Env              map[string]string `yaml:"env"`
			WorkingDirectory string            `yaml:"working-directory"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// expr is a GitHub Actions expression, ${{ … }}.
var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// runAction runs the shell steps of the action at the repository root as
// a runner would, in order, with inputs over the action's defaults: the
// `uses:` steps (setup-go, upload-artifact) are left out, GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY, GITHUB_PATH and RUNNER_TEMP are files and a
// folder under dir, and each step's outputs are read back for the next.
// It returns the step outputs, the job summary and the exit code of the
// step that ended the run (0 when every step passed).
func runAction(t *testing.T, dir string, inputs map[string]string) (outputs map[string]string, summary string, code int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]string{}
	for k, v := range a.Inputs {
		in[k] = v.Default
	}
	for k, v := range inputs {
		if _, ok := a.Inputs[k]; !ok {
			t.Fatalf("action.yml has no input %q", k)
		}
		in[k] = v
	}
	files := map[string]string{}
	for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_PATH"} {
		files[f] = filepath.Join(dir, strings.ToLower(f))
		if err := os.WriteFile(files[f], nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	temp := filepath.Join(dir, "runner-temp")
	if err := os.MkdirAll(temp, 0o755); err != nil {
		t.Fatal(err)
	}
	outputs = map[string]string{}
	eval := func(s string) string {
		return expr.ReplaceAllStringFunc(s, func(m string) string {
			e := expr.FindStringSubmatch(m)[1]
			switch {
			case strings.HasPrefix(e, "inputs."):
				return in[strings.TrimPrefix(e, "inputs.")]
			case strings.HasPrefix(e, "steps.certify.outputs."):
				return outputs[strings.TrimPrefix(e, "steps.certify.outputs.")]
			case e == "github.action_path":
				return root
			}
			t.Fatalf("action.yml: an expression a local run does not know: %s", m)
			return ""
		})
	}
	for _, s := range a.Runs.Steps {
		if s.Uses != "" {
			continue
		}
		if s.Shell != "bash" {
			t.Fatalf("step %q: shell %q, want bash", s.Name, s.Shell)
		}
		env := append(os.Environ(), "GITHUB_JOB=certify", "RUNNER_TEMP="+temp, "GITHUB_OUTPUT="+files["GITHUB_OUTPUT"],
			"GITHUB_STEP_SUMMARY="+files["GITHUB_STEP_SUMMARY"], "GITHUB_PATH="+files["GITHUB_PATH"])
		if p, err := os.ReadFile(files["GITHUB_PATH"]); err == nil && len(p) > 0 {
			env = append(env, "PATH="+strings.Join(strings.Fields(string(p)), ":")+":"+os.Getenv("PATH"))
		}
		for k, v := range s.Env {
			env = append(env, k+"="+eval(v))
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", eval(s.Run))
		cmd.Env, cmd.Dir = env, dir
		if s.WorkingDirectory != "" {
			cmd.Dir = eval(s.WorkingDirectory)
		}
		out, err := cmd.CombinedOutput()
		cancel()
		t.Logf("step %q:\n%s", s.Name, out)
		readOutputs(t, files["GITHUB_OUTPUT"], outputs)
		if err != nil {
			exit, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("step %q: %v", s.Name, err)
			}
			code = exit.ExitCode()
			break
		}
	}
	sum, err := os.ReadFile(files["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	return outputs, string(sum), code
}

// readOutputs reads the name=value lines of a GITHUB_OUTPUT file into out.
func readOutputs(t *testing.T, path string, out map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), "="); ok {
			out[k] = v
		}
	}
}

// TestActionStepsRunLocally (issue 23): the action's shell steps, run as
// a runner would against idemcheck serve --mutant replay-new-charge,
// install the CLI, certify, write the exit code, the page and a
// per-use artefact name to GITHUB_OUTPUT, append the page (which leads
// with the verdict and the counts) to GITHUB_STEP_SUMMARY with the
// artefact's name and the report.html to open in it, and fail the
// job on the FAIL; with no URL the first step fails with exit 2 and
// nothing else runs.
func TestActionStepsRunLocally(t *testing.T) {
	url := serve(t, "--mutant", "replay-new-charge")
	dir := t.TempDir()
	profile, err := filepath.Abs(profile)
	if err != nil {
		t.Fatal(err)
	}
	out, summary, code := runAction(t, dir, map[string]string{"url": url, "profile": profile, "checks": "3", "seed": "7", "budget-requests": "400"})
	if code != 1 {
		t.Errorf("the action's last step exited %d, want 1 (FAIL)", code)
	}
	if out["exit-code"] != "1" {
		t.Errorf("GITHUB_OUTPUT exit-code=%q, want 1", out["exit-code"])
	}
	if _, err := os.Stat(filepath.Join(dir, out["page"])); err != nil || filepath.Base(out["page"]) != "certification.md" {
		t.Errorf("GITHUB_OUTPUT page=%q: %v", out["page"], err)
	}
	if !regexp.MustCompile(`^idemcheck-certification-certify-[0-9a-f]{8}$`).MatchString(out["artifact-name"]) {
		t.Errorf("GITHUB_OUTPUT artifact-name=%q, want idemcheck-certification-<job>-<8 hex>", out["artifact-name"])
	}
	if !strings.HasPrefix(summary, "# idemcheck certification: FAIL\nCauses (1): 1 charges twice; "+requirementsCounted) {
		t.Errorf("the job summary does not start with the page's verdict and counts:\n%.300s", summary)
	}
	runFolder := filepath.Base(filepath.Dir(out["page"]))
	if want := "\nThe run folder is uploaded as the artefact `" + out["artifact-name"] + "`; open `" + runFolder + "/report.html` in it.\n"; !strings.HasSuffix(summary, want) {
		t.Errorf("the job summary does not end with %q", want)
	}
	other, _, _ := runAction(t, t.TempDir(), map[string]string{"url": url, "profile": profile, "checks": "3", "seed": "7", "budget-requests": "400"})
	if other["artifact-name"] == out["artifact-name"] {
		t.Errorf("two matrix entries that certify alike share the artefact name %q", out["artifact-name"])
	}

	out, summary, code = runAction(t, t.TempDir(), map[string]string{"url": ""})
	if code != 2 || len(out) != 0 || summary != "" {
		t.Errorf("no URL: exit %d, outputs %v, summary %q; want exit 2 from the first step and nothing else", code, out, summary)
	}
}
