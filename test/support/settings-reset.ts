// Settings are read once per process (shared/config/), as a Lambda container
// reads them at cold start. A test that changes process.env stands for a new
// container: this setup file wraps process.env so that any change forgets the
// cached settings (and secrets), and the next read sees the new environment.
import { resetSettings } from '../../shared/config/env.js';

const env = process.env;
process.env = new Proxy(env, {
  set(target, name, value) {
    const changed = Reflect.set(target, name, value);
    resetSettings();
    return changed;
  },
  deleteProperty(target, name) {
    const deleted = Reflect.deleteProperty(target, name);
    resetSettings();
    return deleted;
  },
  defineProperty(target, name, descriptor) {
    const defined = Reflect.defineProperty(target, name, descriptor);
    resetSettings();
    return defined;
  },
});
