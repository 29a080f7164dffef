import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const SERVER_ERRORS = path.resolve(import.meta.dirname, '../../web/src/server-errors.ts');

type ServerErrors = {
  knownServerError: (message: string) => { key: string; params: Record<string, string> } | undefined;
  serverErrorText: (message: string) => string;
};

/** The console's mapping, loaded for a browser set to `languages` (the catalogue is picked when it loads). */
async function serverErrorsFor(languages: string[]): Promise<ServerErrors> {
  vi.stubGlobal('navigator', { languages, language: languages[0] });
  vi.resetModules();
  // By path at run time: vitest loads it through vite (import.meta.glob); the server's tsc does not type-check web/.
  return (await import(/* @vite-ignore */ SERVER_ERRORS)) as ServerErrors;
}

describe("the server's English error messages in the console", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it('a known message maps to its catalogue key, the parts that vary kept as parameters', async () => {
    const { knownServerError } = await serverErrorsFor(['en']);
    expect(knownServerError('Permission denied.')).toEqual({ key: 'serverError.permissionDenied', params: {} });
    expect(knownServerError('Unable to login with provided credentials.')).toEqual({ key: 'serverError.signInFailed', params: {} });
    expect(knownServerError('Workspace 12 not found.')).toEqual({ key: 'serverError.workspaceNotFound', params: { id: '12' } });
    expect(knownServerError('dtable Sales 2026 not found.')).toEqual({ key: 'serverError.dtableNotFound', params: { name: 'Sales 2026' } });
    expect(knownServerError('File is too large (the limit is 1048576 bytes).')).toEqual({ key: 'serverError.fileTooLarge', params: { limit: '1048576' } });
    expect(knownServerError("You don't have permission to perform this operation on this base.")?.key).toBe('serverError.readOnly');
  });

  it('only whole messages match: a longer or different message is not a known one', async () => {
    const { knownServerError } = await serverErrorsFor(['en']);
    expect(knownServerError('Permission denied. Ask the owner.')).toBeUndefined();
    expect(knownServerError('permission denied.')).toBeUndefined();
    // a varying part is never empty: the server's nameless form is a message of its own
    expect(knownServerError('dtable not found.')).toEqual({ key: 'serverError.dtableNotFoundNameless', params: {} });
    expect(knownServerError('Permission deniedX')).toBeUndefined(); // the "." is a dot, not any character
  });

  it('in another language a known message is translated, with its varying parts kept as sent', async () => {
    const { serverErrorText } = await serverErrorsFor(['qps-ploc']);
    expect(serverErrorText('Permission denied.')).toBe('⟦Pérmîššîöñ déñîéd.⟧');
    expect(serverErrorText('Workspace 12 not found.')).toBe('⟦Wörkšpáçé 12 ñöt föüñd.⟧');
    expect(serverErrorText('dtable Sales not found.')).toBe('⟦dtáblé Sales ñöt föüñd.⟧');
  });

  it('an unknown message is shown exactly as the server sent it', async () => {
    const { serverErrorText } = await serverErrorsFor(['qps-ploc']);
    expect(serverErrorText('column_data: {"x": 1} do not meet specifications.')).toBe('column_data: {"x": 1} do not meet specifications.');
    expect(serverErrorText('')).toBe('');
  });

  it('in English every message reads as the server sent it, known or not', async () => {
    const { serverErrorText } = await serverErrorsFor(['en-US']);
    for (const message of ['Permission denied.', 'Workspace 12 not found.', 'Token expired.', 'Something new.']) expect(serverErrorText(message)).toBe(message);
  });
});
