/**
 * A statement the SQL endpoint refuses. The route answers 400 `{"success": false, "error_message": …}`;
 * the message names what is wrong (unknown table or column, syntax, type, unsupported construct).
 */
export class SqlError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SqlError';
  }
}

export const sqlError = (message: string) => new SqlError(message);
