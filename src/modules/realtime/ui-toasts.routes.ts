import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Server } from 'socket.io';
import { Type } from 'typebox';
import { currentGateway } from '../access/index.js';
import { badRequest } from '../../shared/errors.js';
import { baseRoom } from './rooms.js';

const TOAST_TYPES = ['success', 'warning', 'error'];
const MAX_USER = 255;
const MAX_MESSAGE = 2000;

export interface UiToast {
  to_user: string;
  toast_type: string;
  detail: { msg: string };
}

/** The body's toast, or a 400 naming the first bad field. */
export function parseToast(body: Record<string, unknown> | undefined): UiToast {
  const toUser = body?.to_user;
  if (typeof toUser !== 'string' || toUser.trim() === '' || toUser.length > MAX_USER) throw badRequest('to_user invalid.');
  const toastType = body?.toast_type ?? 'success';
  if (typeof toastType !== 'string' || !TOAST_TYPES.includes(toastType)) throw badRequest('toast_type invalid.');
  const detail = body?.detail;
  const msg = (detail as { msg?: unknown } | null | undefined)?.msg;
  if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) throw badRequest('detail invalid.');
  if (typeof msg !== 'string' || msg.length > MAX_MESSAGE) throw badRequest('detail.msg invalid.');
  return { to_user: toUser, toast_type: toastType, detail: { msg } };
}

/** `POST /api-gateway/api/v2/dtables/{base_uuid}/ui-toasts/`: a toast to the base's live clients (`ui-toast`). */
export function uiToastsRoutes(io: Server): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api-gateway/api/v2/dtables/:base_uuid/ui-toasts',
      {
        config: { baseAuth: 'write' },
        bodyLimit: 16 * 1024,
        schema: {
          tags: ['notifications'],
          summary: 'Send a toast to the live clients of the base',
          params: Type.Object({ base_uuid: Type.String({ maxLength: 64 }) }),
          body: Type.Record(Type.String(), Type.Unknown()),
          response: { 200: Type.Object({ success: Type.Boolean() }) },
        },
      },
      async (request) => {
        const { base } = currentGateway(request);
        const toast = parseToast(request.body);
        io.to(baseRoom(base.uuid)).emit('ui-toast', JSON.stringify(toast));
        return { success: true };
      },
    );
  };
}
