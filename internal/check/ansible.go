package check

import (
	"fmt"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// An Ansible task file (a YAML list of tasks, or plays holding tasks) is read as what it is:
// the command lines are the arguments of the modules that register or run the kubelet and
// kube-proxy, not the YAML around them. Module arguments follow the collections' docs:
//   - ansible.windows.win_service: path is "the path to the executable … and any arguments",
//     registered with the Service Control Manager
//     (https://docs.ansible.com/ansible/latest/collections/ansible/windows/win_service_module.html);
//   - community.windows.win_nssm: application and arguments (alias app_parameters), run by nssm
//     (https://docs.ansible.com/ansible/latest/collections/community/windows/win_nssm_module.html);
//   - ansible.windows.win_command / win_shell and ansible.builtin.command / shell: the free-form
//     value or cmd (https://docs.ansible.com/ansible/latest/collections/ansible/windows/win_command_module.html).
//
// Jinja placeholders in them are values known when Ansible renders the task (templated.go).

// ansibleModule is what check reads from one module.
type ansibleModule struct {
	// service: the module registers a service whose command line is the argument
	service ServiceKind
	// program, args: the keys holding the program and its arguments; line: one key holding
	// a whole command line
	program, args, line string
	d                   Dialect
	windows             bool
}

var ansibleModules = map[string]ansibleModule{
	"win_service": {service: ServiceSC, line: "path", d: DialectCmd, windows: true},
	"win_nssm":    {service: ServiceNSSM, program: "application", args: "arguments", d: DialectCmd, windows: true},
	"win_command": {line: "cmd", d: DialectCmd, windows: true},
	"win_shell":   {line: "cmd", d: DialectPowerShell, windows: true},
	"command":     {line: "cmd", d: DialectSh},
	"shell":       {line: "cmd", d: DialectSh},
	"raw":         {line: "cmd", d: DialectSh},
}

// ansibleTaskKeys are task keywords (not modules) that tell a list of mappings is Ansible
// (https://docs.ansible.com/ansible/latest/reference_appendices/playbooks_keywords.html).
var ansibleTaskKeys = map[string]bool{"name": true, "when": true, "register": true, "become": true, "tags": true,
	"block": true, "rescue": true, "always": true, "loop": true, "with_items": true, "notify": true, "vars": true,
	"hosts": true, "tasks": true, "roles": true, "include_tasks": true, "import_tasks": true, "delegate_to": true,
	"changed_when": true, "failed_when": true, "ignore_errors": true, "args": true, "environment": true}

var reFQCN = regexp.MustCompile(`^[a-z0-9_]+\.[a-z0-9_]+\.[a-z0-9_]+$`)

// moduleName maps a task key to a module name ("ansible.windows.win_service" → "win_service")
// and reports whether the key names a module.
func moduleName(key string) (string, bool) {
	if reFQCN.MatchString(key) {
		return key[strings.LastIndexByte(key, '.')+1:], true
	}
	_, ok := ansibleModules[key]
	return key, ok
}

// isAnsibleTasks reports whether a YAML document is a list of Ansible tasks or plays: every
// item a mapping, with task keywords and at least one module.
func isAnsibleTasks(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return false
	}
	keyword, module := false, false
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			return false
		}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k := item.Content[i].Value
			if ansibleTaskKeys[k] {
				keyword = true
			}
			if _, ok := moduleName(k); ok {
				module = true
			}
		}
	}
	return keyword && module
}

// loadAnsibleTasks reads file as Ansible tasks when it is one and reports whether it was.
func loadAnsibleTasks(ctx *Context, file string, docs []yamlDoc, text string) bool {
	found := false
	for _, d := range docs {
		if isAnsibleTasks(d.Node) {
			found = true
		}
	}
	if !found {
		return false
	}
	li := newLineIndex(text)
	sc := &Script{File: file, Lines: strings.Split(text, "\n")}
	var cls []*CommandLine
	var walk func(tasks *yaml.Node)
	walk = func(tasks *yaml.Node) {
		if tasks == nil || tasks.Kind != yaml.SequenceNode {
			return
		}
		for _, task := range tasks.Content {
			if task.Kind != yaml.MappingNode {
				continue
			}
			var taskArgs *yaml.Node
			for i := 0; i+1 < len(task.Content); i += 2 {
				if task.Content[i].Value == "args" {
					taskArgs = task.Content[i+1]
				}
			}
			for i := 0; i+1 < len(task.Content); i += 2 {
				k, v := task.Content[i].Value, task.Content[i+1]
				switch k {
				case "block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers":
					walk(v)
					continue
				}
				name, ok := moduleName(k)
				if !ok {
					continue
				}
				if m, known := ansibleModules[name]; known {
					cls = append(cls, ansibleCommandLines(ctx, file, text, li, name, m, v, taskArgs)...)
				}
			}
		}
	}
	for _, d := range docs {
		walk(d.Node)
	}
	for _, cl := range cls {
		if cl.Env == nil {
			cl.Env = map[string]EnvVar{}
		}
	}
	ctx.Scripts = append(ctx.Scripts, sc)
	ctx.CommandLines = append(ctx.CommandLines, cls...)
	if len(cls) == 0 {
		for _, u := range unreadLines(text, DialectSh, nil) {
			ctx.AddProblem("KW0015", Location{File: file, Line: u.line},
				fmt.Sprintf("line %d of an Ansible task file starts or registers %s, but kubewin could not read its command line (%s): its settings are not checked", u.line, u.comp, u.what), "")
		}
	}
	return true
}

// ansibleCommandLines reads the command lines of one module call.
func ansibleCommandLines(ctx *Context, file, text string, li *lineIndex, name string, m ansibleModule, v, taskArgs *yaml.Node) []*CommandLine {
	params := map[string]*yaml.Node{}
	collect := func(n *yaml.Node) {
		if n == nil || n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			params[n.Content[i].Value] = n.Content[i+1]
		}
	}
	collect(taskArgs)
	if v.Kind == yaml.ScalarNode && m.line != "" {
		params[m.line] = v // the free-form value: win_shell: C:\k\kubelet.exe --v=2
	}
	collect(v)
	origin := "Ansible " + name
	var out []*CommandLine
	add := func(cl *CommandLine) {
		cl.Service = m.service
		if m.windows {
			cl.OS, cl.OSEvidence = OSWindows, "an Ansible "+name+" task"
		}
		out = append(out, cl)
	}
	switch {
	case m.line != "":
		n := params[m.line]
		if n == nil || n.Kind != yaml.ScalarNode {
			return nil
		}
		for _, part := range scalarLines(text, li, n, m.d) {
			skip := launcherSkip(part.text)
			comp, ok := programComponentOfLine(part.text[skip:])
			if !ok && m.service != "" {
				comp, ok = serviceComponent(scalarValue(params["name"]))
			}
			if !ok {
				continue
			}
			add(buildCommandLine(ctx, file, part.text[skip:], part.offset+skip, li.lineOf(part.offset+skip), li, comp, origin+" "+m.line, true, m.d, nil))
		}
	case m.program != "":
		p := params[m.program]
		if p == nil || p.Kind != yaml.ScalarNode {
			return nil
		}
		comp, ok := programComponent(p.Value)
		if !ok {
			comp, ok = serviceComponent(scalarValue(params["name"]))
		}
		if !ok {
			return nil
		}
		a := params[m.args]
		if a == nil {
			cl := buildCommandLine(ctx, file, "", 0, p.Line, li, comp, origin, false, m.d, nil)
			cl.Program = p.Value
			add(cl)
			return out
		}
		switch a.Kind {
		case yaml.ScalarNode:
			for _, part := range scalarLines(text, li, a, m.d) {
				cl := buildCommandLine(ctx, file, part.text, part.offset, li.lineOf(part.offset), li, comp, origin+" "+m.args, false, m.d, nil)
				cl.Program = p.Value
				add(cl)
			}
		case yaml.SequenceNode:
			// one argument per item, each as written (no splitting)
			var toks []Token
			for _, it := range a.Content {
				if it.Kind != yaml.ScalarNode {
					continue
				}
				off := li.offsetOf(it.Line, it.Column)
				toks = append(toks, Token{Text: it.Value, Offset: off, End: off + len(it.Value), Vars: renderVars(it.Value)})
			}
			cl := &CommandLine{Component: comp, File: file, Line: a.Line, Origin: origin + " " + m.args, Program: p.Value, Env: map[string]EnvVar{}}
			cl.Flags, cl.Args = parseFlags(toks, ctx.Catalogs.For(comp), nil, li, 0)
			settle(cl, file, text)
			add(cl)
		}
	}
	return out
}

// renderVars lists the template expressions of a value as its unresolved references.
func renderVars(v string) []string {
	toks, _ := Tokenize(v, DialectSh)
	var out []string
	for _, t := range toks {
		for _, r := range t.Vars {
			if strings.HasPrefix(r, "{{") {
				out = append(out, r)
			}
		}
	}
	return out
}

func scalarValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// scalarPart is a piece of a YAML scalar as written in the file, at offset.
type scalarPart struct {
	text   string
	offset int
}

// scalarLines returns the text of a scalar as written in the file, so that positions point at
// the file: a folded block (>, >-) is one command line (its line breaks are spaces, as YAML
// folds them); a literal block (|) holds one command per line (continuations of d joined); a
// flow scalar is its value at its position (a double-quoted one unescaped: YAML escapes
// are not command-line quoting).
func scalarLines(text string, li *lineIndex, n *yaml.Node, d Dialect) []scalarPart {
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		start, end := blockExtent(text, li, n)
		if start >= end {
			return nil
		}
		if n.Style == yaml.FoldedStyle {
			return []scalarPart{{text: text[start:end], offset: start}}
		}
		var out []scalarPart
		for _, ll := range joinContinuations(text[start:end], d) {
			if strings.TrimSpace(ll.text) != "" {
				out = append(out, scalarPart{text: ll.text, offset: start + ll.offset})
			}
		}
		return out
	}
	off := li.offsetOf(n.Line, n.Column)
	if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
		off++
	}
	return []scalarPart{{text: n.Value, offset: off}}
}

// blockExtent returns the byte range of a block scalar's content: the lines after its
// indicator line that are blank or indented at least as deep as its first content line.
func blockExtent(text string, li *lineIndex, n *yaml.Node) (int, int) {
	if n.Line >= len(li.starts) {
		return 0, 0
	}
	start := li.starts[n.Line] // the line after the indicator (starts is 0-based by line-1)
	indent := -1
	end := start
	for l := n.Line; l < len(li.starts); l++ {
		ls := li.starts[l]
		le := len(text)
		if l+1 < len(li.starts) {
			le = li.starts[l+1] - 1
		}
		line := strings.TrimRight(text[ls:le], "\r")
		body := strings.TrimLeft(line, " ")
		if strings.TrimSpace(body) == "" {
			continue
		}
		ind := len(line) - len(body)
		if indent < 0 {
			indent = ind
		}
		if ind < indent {
			break
		}
		end = le
	}
	return start, end
}

// offsetOf is the byte offset of a 1-based line and column.
func (li *lineIndex) offsetOf(line, col int) int {
	if line < 1 || line > len(li.starts) {
		return 0
	}
	return li.starts[line-1] + max(col-1, 0)
}
