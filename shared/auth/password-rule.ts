// The one rule for a password someone chooses (activation, one's own change, the bootstrap
// superadmin's secret, npm start's ADMIN_PASSWORD through ActivateBody): at least 8
// characters, and at most what login takes (longer could be set but never typed back in).
// A module of its own: the route declarations and the bootstrap resource read it without
// loading the password hashing. The console keeps its copy (it imports types only).
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;
