// Command promql-lint parses every PromQL expression Shadowplane ships — the alert rules of a
// rendered PrometheusRule and the queries of the Grafana dashboard — with Prometheus' own parser
// (github.com/prometheus/prometheus/promql/parser), so a typo in an alert fails CI instead of
// failing silently in production. Grafana's variables are substituted first ($__rate_interval →
// 5m, $__range → 1h, $namespace → .*). It also requires every alert to have a summary annotation
// and a severity label.
//
// Usage: promql-lint -rules <rendered manifests.yaml> -dashboard <dashboard.json>
// Exit 1 when an expression does not parse or a rule is incomplete.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"
)

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	} `yaml:"spec"`
}

var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h", `"$namespace"`, `".*"`)

func main() {
	rulesFile := flag.String("rules", "", "YAML file (multi-document) holding PrometheusRule objects")
	dashFile := flag.String("dashboard", "", "Grafana dashboard JSON")
	flag.Parse()
	if *rulesFile == "" && *dashFile == "" {
		fmt.Fprintln(os.Stderr, "usage: promql-lint -rules <manifests.yaml> -dashboard <dashboard.json>")
		os.Exit(2)
	}
	var problems []string
	nRules, nQueries := 0, 0
	p := parser.NewParser(parser.Options{})

	if *rulesFile != "" {
		data, err := os.ReadFile(*rulesFile)
		if err != nil {
			fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var m manifest
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				fatal(fmt.Errorf("%s: %w", *rulesFile, err))
			}
			if m.Kind != "PrometheusRule" {
				continue
			}
			for _, g := range m.Spec.Groups {
				for _, r := range g.Rules {
					nRules++
					name := r.Alert + r.Record
					if _, err := p.ParseExpr(r.Expr); err != nil {
						problems = append(problems, fmt.Sprintf("rule %s/%s: %v", g.Name, name, err))
					}
					if r.Alert != "" {
						if r.Labels["severity"] == "" {
							problems = append(problems, fmt.Sprintf("alert %s: no severity label", name))
						}
						if r.Annotations["summary"] == "" {
							problems = append(problems, fmt.Sprintf("alert %s: no summary annotation", name))
						}
					}
				}
			}
		}
		if nRules == 0 {
			problems = append(problems, fmt.Sprintf("%s: no PrometheusRule rules found", *rulesFile))
		}
	}

	if *dashFile != "" {
		data, err := os.ReadFile(*dashFile)
		if err != nil {
			fatal(err)
		}
		var dash struct {
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(data, &dash); err != nil {
			fatal(fmt.Errorf("%s: %w", *dashFile, err))
		}
		for _, panel := range dash.Panels {
			for _, t := range panel.Targets {
				nQueries++
				if _, err := p.ParseExpr(grafanaVars.Replace(t.Expr)); err != nil {
					problems = append(problems, fmt.Sprintf("panel %q: %v", panel.Title, err))
				}
			}
		}
	}

	for _, pr := range problems {
		fmt.Printf("FAIL  %s\n", pr)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("promql-lint: %d alert/record rules and %d dashboard queries parse (Prometheus promql/parser)\n", nRules, nQueries)
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "promql-lint: %v\n", err)
	os.Exit(2)
}
