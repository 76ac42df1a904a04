/** Teams for tests, joined the way people join them: a manager invites an address, its owner accepts. */
import { expect } from 'vitest';
import type { TestUser } from './accounts.js';
import { request, type Result } from './http.js';

export type InvitedRole = 'admin' | 'operator' | 'viewer';

/** `inviter` invites `member` to the team of `entityId` with `role`; the invitation (201) as answered. */
export async function invite(baseUrl: string, inviter: TestUser, member: TestUser, entityId: number, role: InvitedRole): Promise<Result> {
  return request(baseUrl, 'POST', '/api/operators/add_operator/', inviter.headers, { entity_id: entityId, email: member.user.email, role });
}

/** Invites `member` and has them accept: they are in the team with `role`. Returns the accept's answer (the membership). */
export async function joinTeam(baseUrl: string, inviter: TestUser, member: TestUser, entityId: number, role: InvitedRole): Promise<Result> {
  const invited = await invite(baseUrl, inviter, member, entityId, role);
  expect(invited.status, invited.text).toBe(201);
  const accepted = await request(baseUrl, 'POST', '/api/operators/invitations/accept/', member.headers, { id: invited.body.data.id });
  expect(accepted.status, accepted.text).toBe(200);
  return accepted;
}
