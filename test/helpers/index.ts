export { DIALECTS, SharedDatabase, createPostgresDatabase, createTestDatabase } from './db.js';
export { createTestApp, TEST_PUBLIC_URL } from './app.js';
export type { TestApp } from './app.js';
export { createUser, createBase, basePath, baseToken, removeBlankRows } from './factories.js';
export type { TestUser, TestBase } from './factories.js';
