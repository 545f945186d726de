package extract

import (
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// GoSource is one Go module tree to extract from.
type GoSource struct {
	FS      fs.FS  // rooted at the module root
	Module  string // module path, recorded in each record
	Version string // the version label recorded with each format
	// Component names the component a file (slash path inside FS) belongs to, or "" to skip it.
	Component func(file string) string
}

// skipDirs are directories that hold tests, generated clients, vendored copies or tools, not the
// code that writes a running component's log.
var skipDirs = map[string]bool{
	"vendor": true, "testdata": true, "test": true, "tests": true, "e2e": true, "e2e_node": true,
	"integration": true, "hack": true, "third_party": true, "examples": true, "docs": true,
	"fake": true, "testing": true, "testutil": true, "testutils": true, "mocks": true, "fv": true,
	"benchmark": true, "mock": true, ".git": true,
}

// ExtractGo walks src and adds every message format it finds to set.
func ExtractGo(src GoSource, set *Set) (int, error) {
	byDir := map[string][]string{}
	err := fs.WalkDir(src.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && skipDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			strings.HasPrefix(name, "zz_generated") || strings.HasSuffix(name, ".pb.go") ||
			strings.HasPrefix(name, "mock_") {
			return nil
		}
		if src.Component(p) == "" {
			return nil
		}
		byDir[path.Dir(p)] = append(byDir[path.Dir(p)], p)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("walk %s@%s: %w", src.Module, src.Version, err)
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	n := 0
	for _, d := range dirs {
		files := byDir[d]
		sort.Strings(files)
		k, err := extractDir(src, files, set)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

type parsed struct {
	path string
	os   string
	file *ast.File
}

func extractDir(src GoSource, files []string, set *Set) (int, error) {
	fset := token.NewFileSet()
	var ps []parsed
	for _, p := range files {
		data, err := fs.ReadFile(src.FS, p)
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", p, err)
		}
		f, err := parser.ParseFile(fset, p, data, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			// A file that does not parse with this toolchain (very old or very new syntax) is
			// skipped rather than failing the whole run; the count of records shows the loss.
			continue
		}
		osHint, ok := fileOS(path.Base(p), f)
		if !ok {
			continue
		}
		ps = append(ps, parsed{path: p, os: osHint, file: f})
	}
	consts := map[string]string{}
	for _, p := range ps {
		collectConsts(p.file, consts)
	}
	n := 0
	for _, p := range ps {
		x := &goExtractor{consts: consts}
		x.file(p.file)
		for _, m := range x.found {
			if !Meaningful(m.format) {
				continue
			}
			set.Add(Record{
				Component: src.Component(p.path), OS: p.os, Module: src.Module, File: p.path,
				Func: m.fn, Level: m.level, Format: m.format,
			}, src.Version)
			n++
		}
	}
	return n, nil
}

// Meaningful reports whether a format has enough literal text to name a place in the source: at
// least two words of two or more letters and ten letters in all, so "%v", "failed: %w",
// "Failed to %s" or "%s timed out" are not indexed.
func Meaningful(format string) bool {
	words, letters := 0, 0
	run := 0
	lit := literalText(format)
	for i := 0; i <= len(lit); i++ {
		if i < len(lit) && isLetter(lit[i]) {
			run++
			continue
		}
		if run >= 2 {
			words++
			letters += run
		}
		run = 0
	}
	return words >= 2 && letters >= 10
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// literalText drops printf verbs from a format, leaving a space where each was.
func literalText(format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[j]) >= 0 {
			j++
		}
		i = j
		b.WriteByte(' ')
	}
	return b.String()
}

// fileOS derives the OS hint from the file name suffix and the build constraint; ok is false when
// the file builds for neither Linux nor Windows (darwin-only, "ignore", tools).
func fileOS(name string, f *ast.File) (string, bool) {
	base := strings.TrimSuffix(name, ".go")
	var expr constraint.Expr
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				if e, err := constraint.Parse(c.Text); err == nil {
					expr = e
				}
			} else if expr == nil && constraint.IsPlusBuild(c.Text) {
				if e, err := constraint.Parse(c.Text); err == nil {
					expr = e
				}
			}
		}
	}
	okFor := func(goos string) bool {
		for _, other := range []string{"windows", "linux", "darwin", "freebsd", "solaris", "openbsd", "netbsd", "plan9", "js", "wasip1", "aix", "illumos", "dragonfly", "android", "ios"} {
			if other != goos && strings.HasSuffix(base, "_"+other) {
				return false
			}
			if other != goos && strings.Contains(base, "_"+other+"_") && hasArchSuffix(base) {
				return false
			}
		}
		if expr == nil {
			return true
		}
		return expr.Eval(func(tag string) bool {
			switch tag {
			case goos, "amd64", "gc", "cgo":
				return true
			case "unix":
				return goos == "linux"
			}
			return strings.HasPrefix(tag, "go1.")
		})
	}
	w, l := okFor("windows"), okFor("linux")
	switch {
	case w && l:
		return "", true
	case w:
		return "windows", true
	case l:
		return "linux", true
	}
	return "", false
}

func hasArchSuffix(base string) bool {
	for _, a := range []string{"amd64", "arm64", "386", "arm", "ppc64le", "s390x", "riscv64", "mips64le"} {
		if strings.HasSuffix(base, "_"+a) {
			return true
		}
	}
	return false
}

// collectConsts records package-level string constants and variables whose value is a string
// literal (or a concatenation of them), so a format named by a constant resolves.
func collectConsts(f *ast.File, consts map[string]string) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
			continue
		}
		for _, s := range gd.Specs {
			vs, ok := s.(*ast.ValueSpec)
			if !ok || len(vs.Values) != len(vs.Names) {
				continue
			}
			for i, n := range vs.Names {
				if v, ok := pureString(vs.Values[i], consts); ok {
					consts[n.Name] = v
				}
			}
		}
	}
}

// pureString resolves an expression made only of string literals and known constants.
func pureString(e ast.Expr, consts map[string]string) (string, bool) {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(v.Value)
		return s, err == nil
	case *ast.Ident:
		s, ok := consts[v.Name]
		return s, ok
	case *ast.ParenExpr:
		return pureString(v.X, consts)
	case *ast.BinaryExpr:
		if v.Op != token.ADD {
			return "", false
		}
		a, ok1 := pureString(v.X, consts)
		b, ok2 := pureString(v.Y, consts)
		return a + b, ok1 && ok2
	}
	return "", false
}

type found struct {
	fn, level, format string
}

type goExtractor struct {
	consts map[string]string
	fn     string
	found  []found
	// inError is set inside an error type's Error() string method, whose Sprintf formats and
	// returned strings are the text the error prints (hcsshim's "failed in Win32: %s (0x%x)").
	inError bool
}

func (x *goExtractor) file(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			x.fn = funcName(d)
			x.inError = d.Recv != nil && d.Name.Name == "Error" && d.Type.Params.NumFields() == 0 &&
				d.Type.Results.NumFields() == 1
			if d.Body != nil {
				ast.Inspect(d.Body, x.visit)
			}
			x.inError = false
		case *ast.GenDecl:
			x.fn = ""
			ast.Inspect(d, x.visit)
		}
	}
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch v := t.(type) {
		case *ast.StarExpr:
			t = v.X
			continue
		case *ast.IndexExpr:
			t = v.X
			continue
		case *ast.IndexListExpr:
			t = v.X
			continue
		case *ast.Ident:
			return v.Name + "." + d.Name.Name
		}
		return d.Name.Name
	}
}

func (x *goExtractor) add(level, format string) {
	if format == "" {
		return
	}
	x.found = append(x.found, found{fn: x.fn, level: level, format: format})
}

// Method names by what their arguments mean. Facts from the libraries' own APIs:
// k8s.io/klog/v2 (klog.go), github.com/go-logr/logr (logr.go), github.com/sirupsen/logrus
// (entry.go, logger.go), github.com/pkg/errors (errors.go), google.golang.org/grpc/status.
var (
	printfLevel = map[string]string{
		"Errorf": LevelError, "Warningf": LevelWarning, "Warnf": LevelWarning,
		"Fatalf": LevelFatal, "Panicf": LevelFatal, "Exitf": LevelFatal,
		"Infof": LevelInfoErr, "Printf": LevelInfoErr, "Debugf": LevelInfoErr,
	}
	printLevel = map[string]string{
		"Error": LevelError, "Warning": LevelWarning, "Warn": LevelWarning,
		"Fatal": LevelFatal, "Panic": LevelFatal, "Exit": LevelFatal,
		"Info": LevelInfoErr, "Print": LevelInfoErr,
	}
	printlnLevel = map[string]string{
		"Errorln": LevelError, "Warningln": LevelWarning, "Warnln": LevelWarning,
		"Fatalln": LevelFatal, "Panicln": LevelFatal, "Exitln": LevelFatal,
		"Infoln": LevelInfoErr, "Println": LevelInfoErr,
	}
)

func (x *goExtractor) visit(n ast.Node) bool {
	if ret, ok := n.(*ast.ReturnStmt); ok && x.inError && len(ret.Results) == 1 {
		if s, ok := x.resolve(ret.Results[0], false); ok && s != "%v" {
			x.add(LevelReturned, s)
		}
		return true
	}
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return true
	}
	// k8s.io/apimachinery/pkg/util/runtime: HandleErrorWithContext(ctx, err, msg, kv...) and
	// HandleErrorWithLogger(logger, err, msg, kv...) log msg at error level ("Unhandled Error"
	// goes through its handleError(ctx, err, msg)).
	if name := calleeName(call.Fun); name == "HandleErrorWithContext" || name == "HandleErrorWithLogger" || name == "handleError" {
		if len(call.Args) >= 3 && isStringy(call.Args[2], x.consts) {
			x.add(LevelError, x.plain(call.Args[2]))
		}
		return true
	}
	if x.inError {
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(call.Args) > 0 {
			x.add(LevelReturned, x.format(call.Args[0]))
			return true
		}
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return true
	}
	name := sel.Sel.Name
	pkg := ""
	if id, ok := sel.X.(*ast.Ident); ok {
		pkg = id.Name
	}
	args := call.Args
	verbose := chainHas(sel.X, "V")
	withErr := chainHas(sel.X, "WithError")
	switch {
	case pkg == "fmt" && name == "Errorf":
		if len(args) > 0 {
			x.add(LevelReturned, x.format(args[0]))
		}
		return true
	case isErrorsPkg(pkg) && name == "New" && len(args) == 1:
		x.add(LevelReturned, x.plain(args[0]))
		return true
	case isErrorsPkg(pkg) && name == "Errorf" && len(args) > 0:
		x.add(LevelReturned, x.format(args[0]))
		return true
	case isErrorsPkg(pkg) && name == "Wrap" && len(args) == 2:
		if s := x.plain(args[1]); s != "" {
			x.add(LevelReturned, s+": %v")
		}
		return true
	case isErrorsPkg(pkg) && name == "Wrapf" && len(args) >= 2:
		if s := x.format(args[1]); s != "" {
			x.add(LevelReturned, s+": %v")
		}
		return true
	case pkg == "status" && name == "Errorf" && len(args) >= 2:
		x.add(LevelReturned, x.format(args[1]))
		return true
	case pkg == "status" && name == "Error" && len(args) == 2:
		x.add(LevelReturned, x.plain(args[1]))
		return true
	case pkg == "fmt" || pkg == "strings" || pkg == "errors":
		return true
	}
	switch name {
	case "ErrorS":
		if len(args) >= 2 {
			lvl := LevelError
			if verbose {
				lvl = LevelInfoErr
			}
			x.add(lvl, x.plain(args[1]))
		}
		return true
	case "InfoS":
		if len(args) >= 1 && kvHasErr(args[1:]) {
			x.add(LevelInfoErr, x.plain(args[0]))
		}
		return true
	}
	if lvl, ok := printfLevel[name]; ok && len(args) > 0 {
		if lvl == LevelInfoErr && !withErr && !mentionsErr(args[1:]) {
			return true
		}
		if lvl == LevelError && verbose {
			lvl = LevelInfoErr
		}
		x.add(lvl, x.format(args[0]))
		return true
	}
	if lvl, ok := printLevel[name]; ok && len(args) > 0 {
		// logr: logger.Error(err, "msg", kv...) and logger.Info("msg", kv...).
		if name == "Error" && len(args) >= 2 && !isStringy(args[0], x.consts) && isStringy(args[1], x.consts) {
			x.add(LevelError, x.plain(args[1]))
			return true
		}
		if name == "Info" && len(args) >= 3 && len(args)%2 == 1 && isStringy(args[0], x.consts) && keysAreStrings(args[1:]) {
			if kvHasErr(args[1:]) {
				x.add(LevelInfoErr, x.plain(args[0]))
			}
			return true
		}
		if lvl == LevelInfoErr && !withErr && !mentionsErr(args) {
			return true
		}
		if verbose && lvl == LevelError {
			lvl = LevelInfoErr
		}
		x.add(lvl, x.sprint(args, false))
		return true
	}
	if lvl, ok := printlnLevel[name]; ok && len(args) > 0 {
		if lvl == LevelInfoErr && !withErr && !mentionsErr(args) {
			return true
		}
		x.add(lvl, x.sprint(args, true))
	}
	return true
}

func calleeName(e ast.Expr) string {
	switch f := e.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func isErrorsPkg(pkg string) bool {
	switch pkg {
	case "errors", "pkgerrors", "goerrors", "stderrors", "perrors":
		return true
	}
	return false
}

// chainHas reports whether a call chain receiver (klog.V(2), log.G(ctx).WithError(err)) contains
// a call to name.
func chainHas(e ast.Expr, name string) bool {
	for {
		switch v := e.(type) {
		case *ast.CallExpr:
			if s, ok := v.Fun.(*ast.SelectorExpr); ok {
				if s.Sel.Name == name {
					return true
				}
				e = s.X
				continue
			}
			if id, ok := v.Fun.(*ast.Ident); ok && id.Name == name {
				return true
			}
			return false
		case *ast.SelectorExpr:
			e = v.X
		case *ast.ParenExpr:
			e = v.X
		default:
			return false
		}
	}
}

func isStringy(e ast.Expr, consts map[string]string) bool {
	if _, ok := pureString(e, consts); ok {
		return true
	}
	if c, ok := e.(*ast.CallExpr); ok {
		if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Sprintf" {
			return true
		}
	}
	return false
}

func keysAreStrings(kv []ast.Expr) bool {
	for i := 0; i < len(kv); i += 2 {
		if b, ok := kv[i].(*ast.BasicLit); !ok || b.Kind != token.STRING {
			return false
		}
	}
	return true
}

// kvHasErr reports whether structured key/value pairs carry an error ("err", "error" keys).
func kvHasErr(kv []ast.Expr) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		if b, ok := kv[i].(*ast.BasicLit); ok && b.Kind == token.STRING {
			k := strings.ToLower(strings.Trim(b.Value, "\"`"))
			if k == "err" || k == "error" {
				return true
			}
		}
	}
	return false
}

// mentionsErr reports whether any argument refers to an error value by the usual names.
func mentionsErr(args []ast.Expr) bool {
	hit := false
	for _, a := range args {
		ast.Inspect(a, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				l := strings.ToLower(id.Name)
				if l == "err" || l == "error" || strings.HasSuffix(l, "err") || strings.HasPrefix(l, "err") {
					hit = true
				}
			}
			return !hit
		})
	}
	return hit
}

// format resolves a printf format argument; unresolvable parts become %v.
func (x *goExtractor) format(e ast.Expr) string {
	s, ok := x.resolve(e, true)
	if !ok {
		return ""
	}
	return s
}

// plain resolves a string that is printed as is (klog.ErrorS's msg, errors.New's text): its %
// signs are escaped so that the stored value is a format like the others.
func (x *goExtractor) plain(e ast.Expr) string {
	s, ok := x.resolve(e, false)
	if !ok {
		return ""
	}
	return s
}

// resolve turns e into format text. asFormat tells whether literal text is already a format.
func (x *goExtractor) resolve(e ast.Expr, asFormat bool) (string, bool) {
	esc := func(s string) string {
		if asFormat {
			return s
		}
		return strings.ReplaceAll(s, "%", "%%")
	}
	switch v := e.(type) {
	case *ast.BasicLit, *ast.Ident:
		s, ok := pureString(e, x.consts)
		return esc(s), ok
	case *ast.ParenExpr:
		return x.resolve(v.X, asFormat)
	case *ast.BinaryExpr:
		if v.Op != token.ADD {
			return "", false
		}
		a, ok1 := x.resolve(v.X, asFormat)
		b, ok2 := x.resolve(v.Y, asFormat)
		if !ok1 && !ok2 {
			return "", false
		}
		if !ok1 {
			a = "%v"
		}
		if !ok2 {
			b = "%v"
		}
		return a + b, true
	case *ast.CallExpr:
		if s, ok := v.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Sprintf" && len(v.Args) > 0 {
			return x.resolve(v.Args[0], true)
		}
	}
	return "", false
}

// sprint renders fmt.Sprint/Sprintln semantics: literals as text, other operands as %v; Sprint
// puts a space between operands only when neither is a string, Sprintln always does.
func (x *goExtractor) sprint(args []ast.Expr, ln bool) string {
	var b strings.Builder
	anyLit := false
	prevString := false
	for i, a := range args {
		s, ok := x.resolve(a, false)
		isStr := ok
		if !ok {
			s = "%v"
		} else {
			anyLit = true
		}
		if i > 0 && (ln || (!isStr && !prevString)) {
			b.WriteByte(' ')
		}
		b.WriteString(s)
		prevString = isStr
	}
	if !anyLit {
		return ""
	}
	return b.String()
}
