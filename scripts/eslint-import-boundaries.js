// An ESLint rule for the table of docs/design.md §Parts, as an allow-list: a file under src/<part>/ may
// import, of our own code, only its own part and the parts declared for it; a folder that is not
// declared may import nothing of ours. Rules inside a part (the planner imports only the model and
// errors; only the Pocket side of the chain port imports the protocol library) are declared the
// same way, as folder → what it may import.
import path from 'node:path';

/**
 * @typedef {object} BoundaryOptions
 * @property {Record<string, string[]>} parts  src folder → other src folders it may import
 * @property {{ from: string, allow: string[], reason: string }[]} inner  narrower rules: files
 *   under `from` (a path below src/) may import, of src/, only paths under one of `allow`
 * @property {{ from: string, target: string, except?: string[], reason: string }[]} [deny]
 *   files under `from` may not import anything under `target`, unless they are under `except`
 */

/** @type {import('eslint').Rule.RuleModule} */
export const importBoundaries = {
  meta: {
    type: 'problem',
    docs: { description: 'the import boundaries of docs/design.md §Parts, as an allow-list' },
    schema: [{ type: 'object', additionalProperties: true }],
  },
  create(context) {
    /** @type {BoundaryOptions} */
    const options = context.options[0];
    const root = path.join(context.cwd, 'src');
    const file = context.filename;
    const fromRel = path.relative(root, file);
    if (fromRel.startsWith('..') || path.isAbsolute(fromRel)) return {};
    const fromPart = fromRel.includes(path.sep) ? fromRel.split(path.sep)[0] : '(src)';
    const declared = Object.hasOwn(options.parts, fromPart);
    const allowed = new Set(options.parts[fromPart] ?? []);

    function check(node, source) {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.relative(root, path.resolve(path.dirname(file), source));
      if (target.startsWith('..')) return;
      const targetPart = target.includes(path.sep) ? target.split(path.sep)[0] : '(src)';
      if (targetPart !== fromPart) {
        if (!declared) {
          context.report({
            node,
            message: `src/${fromPart}/ is not a declared part, so it may import nothing of src/ (add it to docs/design.md §Parts and to eslint.config.js's parts first).`,
          });
        } else if (!allowed.has(targetPart)) {
          context.report({
            node,
            message: `src/${fromPart}/ may not import src/${targetPart}/ (docs/design.md §Parts: it may import ${allowed.size === 0 ? 'nothing of ours' : [...allowed].map((p) => `src/${p}/`).join(', ')}).`,
          });
        }
      }
      for (const rule of options.inner) {
        if (!isUnder(fromRel, rule.from) || isUnder(target, rule.from)) continue;
        if (rule.allow.some((allow) => isUnder(target, allow))) continue;
        context.report({
          node,
          message: `src/${rule.from} may not import src/${target} (${rule.reason}).`,
        });
      }
      for (const rule of options.deny ?? []) {
        if (!isUnder(fromRel, rule.from) || !isUnder(target, rule.target)) continue;
        if ((rule.except ?? []).some((except) => isUnder(fromRel, except))) continue;
        context.report({
          node,
          message: `src/${fromRel} may not import src/${target} (${rule.reason}).`,
        });
      }
    }

    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) =>
        node.source.type === 'Literal' && check(node.source, node.source.value),
    };
  },
};

/** True when `rel` (a path below src/) is `prefix` or lies under it. */
function isUnder(rel, prefix) {
  const clean = prefix.replace(/\/$/, '');
  return rel === clean || rel.startsWith(`${clean}${path.sep}`);
}
