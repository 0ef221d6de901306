// The settings of `npm start` (readLocalSettings): the bootstrap superadmin's password
// follows the password rule of activation, so the account it creates is one login accepts.
import { describe, expect, it } from 'vitest';
import { readLocalSettings } from '../../infra/local/settings.js';

describe('ADMIN_PASSWORD', () => {
  it('refuses a password shorter than 8 characters, naming the variable', () => {
    expect(() => readLocalSettings({ ADMIN_PASSWORD: 'x' })).toThrow('ADMIN_PASSWORD: must be at least 8 characters');
  });

  it('refuses a password over 1,024 characters, which login would refuse with 422', () => {
    expect(() => readLocalSettings({ ADMIN_PASSWORD: 'x'.repeat(1025) })).toThrow(/^ADMIN_PASSWORD: .*1024/);
  });

  it('takes 8 to 1,024 characters as typed, and leaves it unset when blank', () => {
    expect(readLocalSettings({ ADMIN_PASSWORD: ' 8 chars' }).adminPassword).toBe(' 8 chars');
    expect(readLocalSettings({ ADMIN_PASSWORD: 'y'.repeat(1024) }).adminPassword).toHaveLength(1024);
    expect(readLocalSettings({ ADMIN_PASSWORD: '' }).adminPassword).toBeUndefined();
  });
});
