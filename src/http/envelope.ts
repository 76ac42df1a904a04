/** The standard success envelope: `{ success: true, data, message, request_id }`. */
import type { Response } from 'express';

export function sendEnvelope<Data>(res: Response, status: number, data: Data, message: string): void {
  res.status(status).json({ success: true, data, message, request_id: String(res.locals.requestId) });
}
