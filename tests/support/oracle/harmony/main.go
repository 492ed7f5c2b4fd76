// Command harmonyoracle is the reference renderer for the Harmony (gpt-oss)
// format: it executes the Go text/template in
// tests/fixtures/harmony_gpt_oss.gotmpl the way Ollama does, so the Python
// formatter can be compared byte for byte with it.
//
// It uses only the standard library. What it reproduces of Ollama:
//
//   - the template is parsed with text/template, Option("missingkey=zero"),
//     and a `currentDate` function returning a "2006-01-02" date;
//   - the messages are collated first: .System is the content of every system
//     message joined with "\n\n" (system messages also stay in .Messages);
//     a message whose role equals the previous collated message's role (and
//     is not "tool") is merged into it: its content is appended after
//     "\n\n", its other fields (thinking, tool name) are dropped;
//   - the data keys are System, Messages (Role, Content, Thinking, ToolName),
//     Tools (Function.Name), Response (""), Think, ThinkLevel, IsThinkSet;
//   - the think value maps as Ollama's api.ThinkValue does for gpt-oss:
//     unset -> (false, "", false); true -> (true, "medium", true);
//     false -> (false, "", true); "low"/"medium"/"high" -> (true, itself,
//     true); "max" -> (true, "high", true).
//
// Usage:
//
//	harmonyoracle -template PATH [-bench N]
//
// Input: one JSON object (a "case") per line on standard input:
//
//	{
//	  "messages": [{"role": "user", "content": "hi", "thinking": "", "tool_name": ""}, ...],
//	  "tools":    [{"function": {"name": "python"}}, "browser", ...],
//	  "think":    true | false | "low" | "medium" | "high" | "max",
//	  "date":     "2025-01-31"
//	}
//
// Every key is optional. Message fields that are absent or null are "".
// A tool is either an object with function.name or a bare name string;
// "tools" absent, null or [] means no tools. "think" absent or null means
// unset. "date" absent or null means today's local date, as Ollama's
// time.Now().Format("2006-01-02"). Blank lines are ignored.
//
// Output: for each case, one JSON line on standard output, flushed at once
// (so a caller may keep the process open and send one case at a time):
//
//	{"output": "..."}   the rendered prompt
//	{"error": "..."}    the case could not be read or the template failed
//
// A template may call `generation` and `endgeneration` (as a tagged copy of
// the template does around what the model generates, like transformers'
// {% generation %} blocks): each pair records the range of the output written
// between them, counted in Unicode code points (Python string indices), and
// the answer then also holds "generation": [[start, end], ...] in call order.
//
// With -bench N, each case is rendered N times (after a short warm-up) and
// the line is instead {"ns_per_render": F, "renders": N, "output_bytes": B}.
// Each timed render does what Ollama does per request: collate a fresh copy
// of the messages, build the data map, execute the template into a buffer.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"
)

// Message mirrors the fields of Ollama's api.Message that the template reads.
type Message struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	Thinking string `json:"thinking"`
	ToolName string `json:"tool_name"`
}

// ToolFunction mirrors api.ToolFunction (only the name matters here).
type ToolFunction struct {
	Name string `json:"name"`
}

// Tool mirrors api.Tool.
type Tool struct {
	Type     string       `json:"type"`
	Function ToolFunction `json:"function"`
}

type rawCase struct {
	Messages []Message         `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
	Think    json.RawMessage   `json:"think"`
	Date     *string           `json:"date"`
}

// prepared is a decoded case, ready to be collated and executed.
type prepared struct {
	messages   []Message
	tools      []Tool
	think      bool
	thinkLevel string
	isThinkSet bool
	date       string
}

func decodeTool(raw json.RawMessage) (Tool, error) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		return Tool{Type: "function", Function: ToolFunction{Name: name}}, nil
	}
	var t Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return Tool{}, fmt.Errorf("tool: %v", err)
	}
	return t, nil
}

// thinkValue maps the JSON think value to (Think, ThinkLevel, IsThinkSet).
func thinkValue(raw json.RawMessage) (bool, string, bool, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return false, "", false, nil
	}
	var b bool
	if err := json.Unmarshal(trimmed, &b); err == nil {
		if b {
			return true, "medium", true, nil
		}
		return false, "", true, nil
	}
	var s string
	if err := json.Unmarshal(trimmed, &s); err != nil {
		return false, "", false, fmt.Errorf("think: expected a bool or a string, got %s", trimmed)
	}
	switch s {
	case "low", "medium", "high":
		return true, s, true, nil
	case "max":
		return true, "high", true, nil
	}
	return false, "", false, fmt.Errorf("think: invalid level %q", s)
}

func decodeCase(line []byte) (*prepared, error) {
	var rc rawCase
	if err := json.Unmarshal(line, &rc); err != nil {
		return nil, err
	}
	p := &prepared{messages: rc.Messages}
	for _, raw := range rc.Tools {
		t, err := decodeTool(raw)
		if err != nil {
			return nil, err
		}
		p.tools = append(p.tools, t)
	}
	var err error
	p.think, p.thinkLevel, p.isThinkSet, err = thinkValue(rc.Think)
	if err != nil {
		return nil, err
	}
	if rc.Date != nil {
		p.date = *rc.Date
	} else {
		p.date = time.Now().Format("2006-01-02")
	}
	return p, nil
}

// collate does what Ollama's template.collate does: it gathers the system
// contents and merges consecutive same-role (non-tool) messages into the
// first of the run. msgs is modified (the first message of a run gets the
// merged content), as in Ollama; callers pass a copy.
func collate(msgs []Message) (string, []*Message) {
	var system []string
	var collated []*Message
	for i := range msgs {
		if msgs[i].Role == "system" {
			system = append(system, msgs[i].Content)
		}
		if len(collated) > 0 && collated[len(collated)-1].Role == msgs[i].Role && msgs[i].Role != "tool" {
			collated[len(collated)-1].Content += "\n\n" + msgs[i].Content
		} else {
			collated = append(collated, &msgs[i])
		}
	}
	return strings.Join(system, "\n\n"), collated
}

type oracle struct {
	tmpl *template.Template
	date string // returned by currentDate for the case being rendered
	// The buffer being executed into and the generation ranges recorded in it
	// (text/template writes each piece to the buffer as it executes, so its
	// length when `generation` is called is the position of what follows).
	buf        *bytes.Buffer
	generation [][2]int
	open       int // the start of the open generation range, or -1
}

func (o *oracle) position() int {
	return utf8.RuneCount(o.buf.Bytes())
}

func (o *oracle) startGeneration() (string, error) {
	if o.open >= 0 {
		return "", errors.New("generation: already open")
	}
	o.open = o.position()
	return "", nil
}

func (o *oracle) endGeneration() (string, error) {
	if o.open < 0 {
		return "", errors.New("endgeneration: no generation open")
	}
	o.generation = append(o.generation, [2]int{o.open, o.position()})
	o.open = -1
	return "", nil
}

func newOracle(path string) (*oracle, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	o := &oracle{}
	funcs := template.FuncMap{
		"currentDate":   func() string { return o.date },
		"generation":    o.startGeneration,
		"endgeneration": o.endGeneration,
	}
	o.tmpl, err = template.New("").Option("missingkey=zero").Funcs(funcs).Parse(string(src))
	if err != nil {
		return nil, err
	}
	return o, nil
}

// render collates a copy of the case's messages and executes the template
// into buf (which it resets first).
func (o *oracle) render(p *prepared, buf *bytes.Buffer) error {
	msgs := make([]Message, len(p.messages))
	copy(msgs, p.messages)
	system, collated := collate(msgs)
	o.date = p.date
	buf.Reset()
	o.buf, o.generation, o.open = buf, nil, -1
	return o.tmpl.Execute(buf, map[string]any{
		"System":     system,
		"Messages":   collated,
		"Tools":      p.tools,
		"Response":   "",
		"Think":      p.think,
		"ThinkLevel": p.thinkLevel,
		"IsThinkSet": p.isThinkSet,
	})
}

type result struct {
	Output      *string  `json:"output,omitempty"`
	Generation  [][2]int `json:"generation,omitempty"`
	Error       *string  `json:"error,omitempty"`
	NsPerRender *float64 `json:"ns_per_render,omitempty"`
	Renders     int      `json:"renders,omitempty"`
	OutputBytes *int     `json:"output_bytes,omitempty"`
}

func errResult(err error) result {
	s := err.Error()
	return result{Error: &s}
}

func (o *oracle) handle(line []byte, bench int, buf *bytes.Buffer) result {
	p, err := decodeCase(line)
	if err != nil {
		return errResult(err)
	}
	if bench <= 0 {
		if err := o.render(p, buf); err != nil {
			return errResult(err)
		}
		if o.open >= 0 {
			return errResult(errors.New("generation: not closed"))
		}
		s := buf.String()
		return result{Output: &s, Generation: o.generation}
	}
	warm := bench / 10
	if warm < 1 {
		warm = 1
	}
	for i := 0; i < warm; i++ {
		if err := o.render(p, buf); err != nil {
			return errResult(err)
		}
	}
	start := time.Now()
	for i := 0; i < bench; i++ {
		if err := o.render(p, buf); err != nil {
			return errResult(err)
		}
	}
	ns := float64(time.Since(start).Nanoseconds()) / float64(bench)
	n := buf.Len()
	return result{NsPerRender: &ns, Renders: bench, OutputBytes: &n}
}

func run() error {
	tmplPath := flag.String("template", "", "path to the Go template (required)")
	bench := flag.Int("bench", 0, "render each case N times and report ns per render")
	flag.Parse()
	if *tmplPath == "" {
		return errors.New("-template is required")
	}
	o, err := newOracle(*tmplPath)
	if err != nil {
		return err
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var buf bytes.Buffer
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if err := enc.Encode(o.handle(line, *bench, &buf)); err != nil {
				return err
			}
			if err := out.Flush(); err != nil {
				return err
			}
		}
		if readErr == io.EOF {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "harmonyoracle:", err)
		os.Exit(2)
	}
}
