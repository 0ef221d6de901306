// Invitation tokens are stored only as their SHA-256 hash.
import { createHash } from 'node:crypto';

export const hashInvitationToken = (token: string): string => createHash('sha256').update(token).digest('hex');
