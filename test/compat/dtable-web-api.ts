import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The official web client, as its CommonJS build exports it. */
export interface DTableWebAPIClient {
  init(options: { server: string; username?: string; password?: string; token?: string }): DTableWebAPIClient;
  login(): Promise<void>;
  token: string;
  [method: string]: any;
}

export function newWebApiClient(): DTableWebAPIClient {
  const DTableWebAPI = (require('dtable-web-api') as { default: new () => DTableWebAPIClient }).default;
  return new DTableWebAPI();
}
