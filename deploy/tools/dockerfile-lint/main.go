// Command dockerfile-lint checks Shadowplane's Dockerfile without a Docker engine.
//
// It runs three kinds of check and exits 1 when any fails:
//
//  1. BuildKit's own Dockerfile rules — the ones `docker build --check` runs — through
//     dockerfile2llb.DockerfileLint. No registry is reachable here, so base-image metadata is
//     answered by a stub (an empty linux image config); rules that need the real base-image
//     config (e.g. InvalidBaseImagePlatform against the real manifest) therefore cannot fire.
//  2. Shadowplane's image policy, asserted on the parsed instructions: every base image pinned to
//     an explicit, non-"latest" tag (or a digest); no ADD of a URL or git source; no HEALTHCHECK
//     (Kubernetes probes do it); the final stage runs as a numeric non-root user and never switches
//     back to root; the ENTRYPOINT is exec form starting with tini and the one shadowplane binary;
//     every `npm ci` / `npm install` omits dev dependencies, except in the stage named "build",
//     of which the final stage copies only dist/; the final stage sets SHADOWPLANE_RUN_FROM=dist
//     (the binary runs the compiled build, never the sources); no secret-looking ARG/ENV defaults.
//  3. The build context after .dockerignore (BuildKit's own pattern matcher): required files are
//     sent, while node_modules, .git, local binaries and key files are not.
//
// Usage: dockerfile-lint [-f Dockerfile] [-context .]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/distribution/reference"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerui"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// stubResolver answers base-image metadata lookups offline with an empty linux/amd64 config.
type stubResolver struct{}

func (stubResolver) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	cfg := map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config":       map[string]any{"Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{}},
	}
	dt, err := json.Marshal(cfg)
	if err != nil {
		return "", "", nil, err
	}
	return ref, digest.FromBytes(dt), dt, nil
}

type report struct {
	problems []string
	passed   []string
}

func (r *report) fail(format string, a ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, a...))
}
func (r *report) ok(format string, a ...any) { r.passed = append(r.passed, fmt.Sprintf(format, a...)) }

func main() {
	file := flag.String("f", "Dockerfile", "Dockerfile to check")
	ctxDir := flag.String("context", ".", "build context directory (for the .dockerignore check)")
	printContext := flag.Bool("print-context", false, "only print the files the build context would send (one per line) and exit")
	flag.Parse()

	if *printContext {
		files, _, err := contextFiles(*ctxDir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "dockerfile-lint: %v\n", err)
			os.Exit(2)
		}
		for _, f := range files {
			fmt.Println(f)
		}
		return
	}

	dt, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dockerfile-lint: %v\n", err)
		os.Exit(2)
	}
	r := &report{}
	buildkitRules(r, *file, dt)
	policy(r, dt)
	buildContext(r, *ctxDir)

	for _, p := range r.passed {
		fmt.Printf("ok    %s\n", p)
	}
	for _, p := range r.problems {
		fmt.Printf("FAIL  %s\n", p)
	}
	if len(r.problems) > 0 {
		fmt.Printf("dockerfile-lint: %d problem(s) in %s\n", len(r.problems), *file)
		os.Exit(1)
	}
	fmt.Printf("dockerfile-lint: %s passed (%d checks)\n", *file, len(r.passed))
}

// buildkitRules runs BuildKit's lint rules (all stages, every rule enabled by default).
func buildkitRules(r *report, name string, dt []byte) {
	sm := llb.NewSourceMap(nil, name, "Dockerfile", dt)
	sm.Definition = &llb.Definition{}
	platform := ocispecs.Platform{OS: "linux", Architecture: "amd64"}
	res, err := dockerfile2llb.DockerfileLint(context.Background(), dt, dockerfile2llb.ConvertOpt{
		Config:         dockerui.Config{},
		SourceMap:      sm,
		MetaResolver:   stubResolver{},
		TargetPlatform: &platform,
	})
	if err != nil {
		r.fail("buildkit lint could not run: %v", err)
		return
	}
	if res.Error != nil {
		r.fail("buildkit: build error: %s", res.Error.Message)
	}
	for _, w := range res.Warnings {
		line := 0
		if w.Location != nil && len(w.Location.Ranges) > 0 {
			line = int(w.Location.Ranges[0].Start.Line)
		}
		r.fail("buildkit rule %s (line %d): %s", w.RuleName, line, w.Detail)
	}
	if res.Error == nil && len(res.Warnings) == 0 {
		r.ok("buildkit check rules: no warnings, no build error")
	}
}

// buildStage names the one stage allowed to install dev dependencies (to compile dist/).
const buildStage = "build"

var secretName = regexp.MustCompile(`(?i)(secret|password|passwd|token|api_?key|private_?key|credential)`)

// policy asserts Shadowplane's image rules on the parsed instructions.
func policy(r *report, dt []byte) {
	ast, err := parser.Parse(strings.NewReader(string(dt)))
	if err != nil {
		r.fail("parse: %v", err)
		return
	}
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		r.fail("parse instructions: %v", err)
		return
	}
	if len(stages) == 0 {
		r.fail("no FROM stage")
		return
	}
	argDefaults := map[string]string{}
	for _, ma := range metaArgs {
		for _, kv := range ma.Args {
			if kv.Value != nil {
				argDefaults[kv.Key] = *kv.Value
			}
		}
	}
	stageNames := map[string]bool{}
	npmInstalls, npmWithDev, buildInstalls := 0, 0, 0
	for i, st := range stages {
		base := expandArgs(st.BaseName, argDefaults)
		if !stageNames[strings.ToLower(base)] {
			checkPinned(r, i, st.Name, base)
		}
		if st.Name != "" {
			stageNames[strings.ToLower(st.Name)] = true
		}
		for _, cmd := range st.Commands {
			switch c := cmd.(type) {
			case *instructions.AddCommand:
				for _, src := range c.SourcePaths {
					if strings.Contains(src, "://") || strings.HasPrefix(src, "git@") {
						r.fail("stage %q: ADD of a remote source %q (download in a RUN step with a checksum, or COPY)", st.Name, src)
					}
				}
			case *instructions.HealthCheckCommand:
				r.fail("stage %q: HEALTHCHECK present (Kubernetes probes do health checking)", st.Name)
			case *instructions.RunCommand:
				line := strings.Join(c.CmdLine, " ")
				isInstall := regexp.MustCompile(`\bnpm\s+(ci|install|i)\b`).MatchString(line)
				if isInstall && strings.EqualFold(st.Name, buildStage) && i != len(stages)-1 {
					// the build stage needs the compiler (a dev dependency); only its dist/ leaves it
					buildInstalls++
				} else if isInstall {
					npmInstalls++
					if !strings.Contains(line, "--omit=dev") {
						npmWithDev++
						r.fail("stage %q: npm install without --omit=dev: %s", st.Name, line)
					}
				}
				if regexp.MustCompile(`\b(curl|wget)\b[^|]*\|\s*(sh|bash)\b`).MatchString(line) {
					r.fail("stage %q: pipes a download into a shell: %s", st.Name, line)
				}
			case *instructions.EnvCommand:
				for _, kv := range c.Env {
					if secretName.MatchString(kv.Key) && kv.Value != "" {
						r.fail("stage %q: ENV %s has a default value; secrets come from the runtime", st.Name, kv.Key)
					}
				}
			case *instructions.ArgCommand:
				for _, kv := range c.Args {
					if secretName.MatchString(kv.Key) && kv.Value != nil {
						r.fail("stage %q: ARG %s has a default value; use a build secret", st.Name, kv.Key)
					}
				}
			}
		}
	}
	if npmInstalls == 0 {
		r.fail("no `npm ci --omit=dev` step found")
	} else if npmWithDev == 0 {
		r.ok("every npm install step (%d) omits dev dependencies", npmInstalls)
	}

	final := stages[len(stages)-1]
	user := ""
	var entrypoint *instructions.EntrypointCommand
	copiesDist, runFromDist := false, false
	for _, cmd := range final.Commands {
		switch c := cmd.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.EntrypointCommand:
			entrypoint = c
		case *instructions.CopyCommand:
			if !strings.EqualFold(c.From, buildStage) {
				continue
			}
			for _, src := range c.SourcePaths {
				if strings.TrimSuffix(src, "/") != "/src/dist" {
					r.fail("final stage: copies %s from the %s stage (only /src/dist/ may leave it: it has dev dependencies)", src, buildStage)
				} else {
					copiesDist = true
				}
			}
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				if kv.Key == "SHADOWPLANE_RUN_FROM" {
					runFromDist = kv.Value == "dist"
				}
			}
		}
	}
	if buildInstalls > 0 && !copiesDist {
		r.fail("stage %q installs dev dependencies but the final stage does not copy its /src/dist/", buildStage)
	}
	if !copiesDist {
		r.fail("final stage: no COPY --from=%s /src/dist/ (the compiled binaries)", buildStage)
	} else if !runFromDist {
		r.fail("final stage: ENV SHADOWPLANE_RUN_FROM=dist missing (the binary would fall back to the TypeScript sources)")
	} else {
		r.ok("final stage runs the compiled build: COPY --from=%s /src/dist/, SHADOWPLANE_RUN_FROM=dist", buildStage)
	}
	checkUser(r, user)
	if entrypoint == nil {
		r.fail("final stage: no ENTRYPOINT")
	} else if entrypoint.PrependShell {
		r.fail("final stage: ENTRYPOINT in shell form (signals would go to /bin/sh, not the role)")
	} else {
		args := entrypoint.CmdLine
		if len(args) < 2 || filepath.Base(args[0]) != "tini" || args[1] != "--" {
			r.fail("final stage: ENTRYPOINT must start with tini -- (got %q)", args)
		} else {
			r.ok("ENTRYPOINT is exec form under tini: %q", args)
		}
		if !strings.HasSuffix(strings.Join(args, " "), "node /app/services/shadowplane/bin/shadowplane.mjs") {
			r.fail("final stage: ENTRYPOINT must run node /app/services/shadowplane/bin/shadowplane.mjs (got %q)", args)
		}
	}
	if len(r.problems) == 0 {
		r.ok("no ADD of remote sources, no HEALTHCHECK, no secret defaults in ARG/ENV")
	}
}

func expandArgs(s string, defaults map[string]string) string {
	return regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`).ReplaceAllStringFunc(s, func(m string) string {
		name := strings.Trim(m, "${}")
		return defaults[name]
	})
}

func checkPinned(r *report, i int, name, base string) {
	if base == "scratch" {
		return
	}
	ref, err := reference.ParseNormalizedNamed(base)
	if err != nil {
		r.fail("stage %d %q: base image %q does not parse: %v", i, name, base, err)
		return
	}
	_, hasDigest := ref.(reference.Digested)
	tagged, hasTag := ref.(reference.Tagged)
	switch {
	case hasDigest:
		r.ok("stage %q base %s pinned by digest", name, base)
	case !hasTag:
		r.fail("stage %q: base image %q has no tag (implicit latest)", name, base)
	case tagged.Tag() == "latest":
		r.fail("stage %q: base image %q uses the latest tag", name, base)
	case !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(tagged.Tag()):
		r.fail("stage %q: base image %q tag is not a full version (major.minor.patch)", name, base)
	default:
		r.ok("stage %q base %s pinned to a full version tag (pin by digest at release: --build-arg)", name, base)
	}
}

func checkUser(r *report, user string) {
	if user == "" {
		r.fail("final stage: no USER (would run as root)")
		return
	}
	uidPart := strings.SplitN(user, ":", 2)[0]
	uid, err := strconv.Atoi(uidPart)
	if err != nil {
		r.fail("final stage: USER %q is not numeric (Kubernetes runAsNonRoot cannot verify a name)", user)
		return
	}
	if uid == 0 {
		r.fail("final stage: USER is root")
		return
	}
	r.ok("final stage runs as numeric non-root user %s", user)
}

// contextFiles lists the files the build context would send after .dockerignore, with their total size.
func contextFiles(dir string) ([]string, int64, error) {
	f, err := os.Open(filepath.Join(dir, ".dockerignore"))
	if err != nil {
		return nil, 0, fmt.Errorf("no .dockerignore in %s", dir)
	}
	patterns, err := ignorefile.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, 0, fmt.Errorf(".dockerignore: %w", err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		return nil, 0, fmt.Errorf(".dockerignore patterns: %w", err)
	}
	var sent []string
	var bytes int64
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		excluded, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Only skip a directory when no exception pattern could re-include something inside it.
			if excluded && (!pm.Exclusions() || rel == ".git" || strings.HasSuffix(rel, "node_modules") || rel == ".bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !excluded {
			sent = append(sent, filepath.ToSlash(rel))
			if info, err := d.Info(); err == nil {
				bytes += info.Size()
			}
		}
		return nil
	})
	return sent, bytes, err
}

// buildContext checks the files the context would send after .dockerignore.
func buildContext(r *report, dir string) {
	sent, bytes, err := contextFiles(dir)
	if err != nil {
		r.fail("build context: %v", err)
		return
	}
	has := map[string]bool{}
	for _, s := range sent {
		has[s] = true
	}
	for _, need := range []string{"package.json", "package-lock.json", "tsconfig.base.json", "services/shadowplane/bin/shadowplane.mjs", "services/shadowplane/src/index.ts", "scripts/build.mjs", "examples/data/gsm8k-test.jsonl"} {
		if !has[need] {
			r.fail("build context is missing %s", need)
		}
	}
	bad := regexp.MustCompile(`(^|/)(node_modules|\.git|\.bin)(/|$)|\.(pem|key)$|(^|/)\.env(\.|$)|\.test\.ts$`)
	nBad := 0
	for _, s := range sent {
		if bad.MatchString(s) {
			nBad++
			if nBad <= 5 {
				r.fail("build context would send %s", s)
			}
		}
	}
	if nBad == 0 {
		r.ok("build context: %d files, %.1f MiB; no node_modules, .git, .bin, key files or tests", len(sent), float64(bytes)/(1<<20))
	}
}
