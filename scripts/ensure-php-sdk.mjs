// `npm test` runs the official PHP SDK's file calls (vendored in test/compat/php-sdk) against a
// listening server. PHP and Guzzle come from Debian: install them with apt-get when we may (root);
// otherwise say how, and fail before the suite starts.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const php = process.env.TEST_PHP ?? '/usr/bin/php';
const packages = ['php-cli', 'php-curl', 'php-mbstring', 'php-guzzlehttp-guzzle'];
const ready = () => {
  try {
    execFileSync(php, ['-r', "require '/usr/share/php/GuzzleHttp/autoload.php'; if (!extension_loaded('curl') || !extension_loaded('mbstring')) exit(1);"], { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
};
if (!ready()) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    console.error(`The PHP SDK test needs ${php} with ${packages.join(', ')} (apt-get install -y ${packages.join(' ')}) or TEST_PHP.`);
    process.exit(1);
  }
  console.log('Installing the PHP SDK test dependencies from Debian…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env, timeout: 300_000 });
  execFileSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: 'inherit', env, timeout: 600_000 });
}
