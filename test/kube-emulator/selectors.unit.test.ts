// Conformance check 10: label selectors against objects with and without the key; field selectors.
import { describe, expect, it } from 'vitest';
import {
  parseFieldSelector,
  matchesFields,
} from '../../src/kube-emulator/selectors/field-selector.ts';
import {
  fromStructured,
  matchesLabels,
  parseLabelSelector,
  selectorToString,
} from '../../src/kube-emulator/selectors/label-selector.ts';
import { ApiError } from '../../src/kube-emulator/status-errors.ts';

const withV = { app: 'v', tier: '3' };
const withW = { app: 'w' };
const without = { other: 'x' };

// Expected results as the Kubernetes label selector documentation defines them.
const table: [string, boolean, boolean, boolean][] = [
  // selector, {app:v,tier:3}, {app:w}, {other:x}
  ['', true, true, true],
  ['app=v', true, false, false],
  ['app==v', true, false, false],
  ['app!=v', false, true, true],
  ['app in (v,w)', true, true, false],
  ['app in (v)', true, false, false],
  ['app notin (v)', false, true, true],
  ['app', true, true, false],
  ['!app', false, false, true],
  ['app=v,tier', true, false, false],
  ['app in (v, w),!other', true, true, false],
  ['tier>2', true, false, false],
  ['tier<3', false, false, false],
  ['example.com/role', false, false, false],
];

describe('label selectors', () => {
  it.each(table)('%j selects as documented', (selector, v, w, none) => {
    const parsed = parseLabelSelector(selector);
    expect([
      matchesLabels(parsed, withV),
      matchesLabels(parsed, withW),
      matchesLabels(parsed, without),
    ]).toEqual([v, w, none]);
  });

  it.each(['app in (v', 'app=v=w', '=v', 'app notin', 'a b', 'app in (v,w))'])(
    'rejects %j with 400 BadRequest',
    (selector) => {
      expect(() => parseLabelSelector(selector)).toThrow(ApiError);
      try {
        parseLabelSelector(selector);
      } catch (error: unknown) {
        expect((error as ApiError).code).toBe(400);
      }
    },
  );

  it('converts a structured selector to the string form a Scale carries', () => {
    const selector = fromStructured({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
        { key: 'x', operator: 'DoesNotExist' },
      ],
    });
    expect(selectorToString(selector)).toBe('app=web,tier in (a,b),!x');
  });
});

describe('field selectors', () => {
  const supported = new Set(['metadata.name', 'involvedObject.name']);
  it('matches =, == and != and rejects unsupported fields', () => {
    const values: Record<string, string> = {
      'metadata.name': 'web-0',
      'involvedObject.name': 'web',
    };
    const match = (text: string) =>
      matchesFields(parseFieldSelector(text, supported), (f) => values[f] ?? '');
    expect(match('metadata.name=web-0')).toBe(true);
    expect(match('metadata.name==web-1')).toBe(false);
    expect(match('metadata.name!=web-1,involvedObject.name=web')).toBe(true);
    expect(() => parseFieldSelector('status.phase=Running', supported)).toThrow(
      'field label not supported: status.phase',
    );
  });
});
