// The console as most browser tests need it: the whole local service on a demo fleet, Chromium on it, the
// admin's API token, and two pages signed in through the real form, the admin's and a viewer's (an account
// made as the console makes one). One per test file; `close` ends the browser, then the service.
import type { Page } from 'playwright-core';
import type { LocalService } from '../../infra/local/service.js';
import { addUser, apiLogin, launchBrowser, signIn, type TestBrowser } from './browser.js';
import { startTestService } from './local-service.js';

export interface ConsoleUnderTest {
  service: LocalService;
  browser: TestBrowser;
  /** The built-in admin's (a superadmin) API token. */
  admin: string;
  adminPage: Page;
  viewerPage: Page;
  close(): Promise<void>;
}

export async function startConsole(options: {
  adminPassword: string;
  demoClusters: number;
  viewer: { email: string; name: string; password: string };
}): Promise<ConsoleUnderTest> {
  const service = await startTestService({ adminPassword: options.adminPassword, demoClusters: options.demoClusters });
  let browser: TestBrowser | undefined;
  const close = async () => {
    await browser?.close();
    await service.stop();
  };
  try {
    let admin: string;
    [browser, admin] = await Promise.all([launchBrowser(service.url), apiLogin(service.url, 'admin', options.adminPassword)]);
    await addUser(service.url, admin, { ...options.viewer, role: 'viewer' });
    const [adminPage, viewerPage] = await Promise.all([browser.page(), browser.page()]);
    await Promise.all([signIn(adminPage, 'admin', options.adminPassword), signIn(viewerPage, options.viewer.email, options.viewer.password)]);
    return { service, browser, admin, adminPage, viewerPage, close };
  } catch (error) {
    await close(); // a half-started console would keep the test run from ending
    throw error;
  }
}
