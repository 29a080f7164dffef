import type { FastifyRequest } from 'fastify';
import { currentGateway, type BaseTokenClaims } from '../access/index.js';
import { AppError, badRequest } from '../../shared/errors.js';
import type { Actor, BaseRef } from './base-writer.js';
import type { Viewer } from './rows.service.js';

export const GATEWAY = '/api-gateway/api/v2/dtables/:base_uuid';

export function baseOf(request: FastifyRequest): BaseRef {
  const { base } = currentGateway(request);
  return { id: base.id, uuid: base.uuid };
}

/**
 * Who writes, from the Base-Token: a user's virtual id, or the API-Token's app_name when the token was
 * issued from an API-Token (the original's `_creator` / `_last_modifier` rule).
 */
export function actorOf(request: FastifyRequest): Actor {
  return actorOfClaims(currentGateway(request).claims);
}

/** `actorOf` for a Base-Token verified elsewhere (the live channel). */
export function actorOfClaims(claims: BaseTokenClaims): Actor {
  const app = claims.appName;
  const user = claims.source === 'api-token' ? (app ?? '') : claims.username || app || '';
  const userId = claims.source === 'account' || claims.source === 'temp-api-token' ? claims.sourceId : undefined;
  return userId === undefined ? { user, app } : { user, app, userId };
}

export function viewerOf(request: FastifyRequest): Viewer {
  const { claims } = currentGateway(request);
  return claims.username ? { currentUser: claims.username } : {};
}

/**
 * The JSON body of a GET request (the Python client sends filters that way). Fastify does not parse
 * bodies of GET requests, so the raw stream is read here, within `limit` bytes.
 */
export async function readGetBody(request: FastifyRequest, limit: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size > limit) throw new AppError(413, { error_msg: 'Request body is too large.' });
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest('Request body is not valid JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badRequest('Request body must be a JSON object.');
  return parsed as Record<string, unknown>;
}
