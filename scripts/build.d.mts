/** Types of scripts/build.mjs for the TypeScript code that calls it (test/global-setup.ts). */
export function isStale(): boolean;
export function build(options?: { log?: (line: string) => void }): Promise<number>;
export function ensureBuilt(): Promise<void>;
