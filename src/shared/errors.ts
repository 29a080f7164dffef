/**
 * Errors that reach the client. Every error the API returns is an AppError carrying the exact
 * body the contract prescribes, so handlers throw and the error handler only serializes.
 */
export type ErrorBody = Record<string, unknown>;

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: ErrorBody | null,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body?.error_msg === 'string' ? body.error_msg : `HTTP ${statusCode}`);
    this.name = 'AppError';
  }
}

/** Business error in dtable-web style: `{"error_msg": "…"}`. */
export function apiError(statusCode: number, message: string): AppError {
  return new AppError(statusCode, { error_msg: message });
}

/** Framework-level (DRF) error: `{"detail": "…"}`. */
export function detailError(statusCode: number, detail: string): AppError {
  return new AppError(statusCode, { detail });
}

export const badRequest = (message: string) => apiError(400, message);
export const notFound = (message: string) => apiError(404, message);
export const conflict = (message: string) => apiError(409, message);
export const permissionDenied = () => apiError(403, 'Permission denied.');
