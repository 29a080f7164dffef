// `npm test` runs the official PHP SDK's file calls (vendored in test/compat/php-sdk) against a
// listening server. PHP and Guzzle come from Debian: install them with apt-get when we may (root);
// otherwise say how, and fail before the suite starts.
import { ensureDebian, runs } from './ensure-debian.mjs';

const php = process.env.TEST_PHP ?? '/usr/bin/php';
const packages = ['php-cli', 'php-curl', 'php-mbstring', 'php-guzzlehttp-guzzle'];
ensureDebian({
  label: 'PHP SDK tests',
  packages,
  ready: () => runs(php, ['-r', "require '/usr/share/php/GuzzleHttp/autoload.php'; if (!extension_loaded('curl') || !extension_loaded('mbstring')) exit(1);"]),
  hint: `${php} with ${packages.join(', ')}, or TEST_PHP`,
});
