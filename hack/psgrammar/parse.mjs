// Parses PowerShell files with the tree-sitter-powershell grammar (its WebAssembly build, run by
// web-tree-sitter) and prints one JSON object per input file on stdout, one per line:
//   {"file": "...", "errors": [{"kind": "ERROR"|"MISSING", "type": "...", "row": R, "col": C, "text": "..."}],
//    "tokens": [{"type": "...", "text": "...", "row": R, "col": C}]}   (tokens only with --tokens)
// Rows and columns are 0-based (tree-sitter's points). It is a test oracle for kubewin: rendered
// .ps1 files must parse with zero ERROR/MISSING nodes, and kubewin's own PowerShell tokeniser is
// compared with the grammar's leaves.
//
// Usage: node parse.mjs [--tokens] FILE...   (FILE "-" reads a JSON array of {name, text} from stdin)
import { Parser, Language } from 'web-tree-sitter';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const withTokens = args.includes('--tokens');
const inputs = args.filter((a) => a !== '--tokens');

await Parser.init();
const wasm = require.resolve('tree-sitter-powershell/tree-sitter-powershell.wasm');
const lang = await Language.load(wasm);
const parser = new Parser();
parser.setLanguage(lang);

let docs = [];
for (const f of inputs) {
  if (f === '-') {
    docs = docs.concat(JSON.parse(readFileSync(0, 'utf8')));
  } else {
    docs.push({ name: f, text: readFileSync(f, 'utf8') });
  }
}

for (const doc of docs) {
  // A UTF-8 byte order mark is legal at the start of a .ps1 file and is not part of the grammar.
  const text = doc.text.replace(/^\uFEFF/, '');
  const tree = parser.parse(text);
  const errors = [];
  const tokens = [];
  const walk = (node) => {
    if (node.isError || node.type === 'ERROR') {
      errors.push({ kind: 'ERROR', type: node.type, row: node.startPosition.row, col: node.startPosition.column, text: node.text.slice(0, 120) });
    } else if (node.isMissing) {
      errors.push({ kind: 'MISSING', type: node.type, row: node.startPosition.row, col: node.startPosition.column, text: '' });
    }
    if (withTokens && node.childCount === 0 && !node.isMissing) {
      tokens.push({ type: node.type, text: node.text, row: node.startPosition.row, col: node.startPosition.column });
    }
    for (let i = 0; i < node.childCount; i++) walk(node.child(i));
  };
  walk(tree.rootNode);
  const out = { file: doc.name, errors };
  if (withTokens) out.tokens = tokens;
  process.stdout.write(JSON.stringify(out) + '\n');
  tree.delete();
}
