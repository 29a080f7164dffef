import { describe, expect, it } from 'vitest';
import { checkAssetPath } from './asset-paths.js';

describe('asset paths', () => {
  it('normalizes the ways clients name a file and refuses traversal', () => {
    expect(checkAssetPath('/files/2026-11/a.txt', 'path', 'u')).toBe('files/2026-11/a.txt');
    expect(checkAssetPath('/asset/u/files/a.txt', 'path', 'u')).toBe('files/a.txt');
    for (const bad of ['../a', 'files/../../a', 'a\\b', 'files/\u0000', '', 42]) expect(() => checkAssetPath(bad, 'path', 'u')).toThrow();
  });
});
