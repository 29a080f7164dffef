<?php
// Ours: drives the vendored SeaTable PHP client (lib/, unchanged) against a listening server.
// Usage: php files_flow.php <server> <api-token> <file>; prints one JSON object.
require '/usr/share/php/GuzzleHttp/autoload.php';
spl_autoload_register(function ($class) {
    $prefix = 'SeaTable\\Client\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        require __DIR__ . '/lib/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    }
});

[, $server, $apiToken, $file] = $argv;
$config = SeaTable\Client\Configuration::getDefaultConfiguration()->setAccessToken($apiToken)->setHost($server);
$api = new SeaTable\Client\File\FilesImagesApi(new GuzzleHttp\Client(), $config);
$out = [];
$link = $api->getUploadLink();
$out['upload_link'] = $link->getUploadLink();
$out['parent_path'] = $link->getParentPath();
$out['file_relative_path'] = $link->getFileRelativePath();
$token = substr($link->getUploadLink(), strpos($link->getUploadLink(), '/seafhttp/upload-api/') + strlen('/seafhttp/upload-api/'));
// The link's token is UUID-shaped, so the client's own uploadFile sends it (it checks the pattern first).
$out['uploaded'] = array_map(fn ($f) => (array) $f, $api->uploadFile($token, new SplFileObject($file), $link->getParentPath(), $link->getFileRelativePath(), '0'));
$path = '/' . $link->getFileRelativePath() . '/' . $out['uploaded'][0]['name'];
$out['path'] = $path;
$answer = (array) $api->getFileDownloadLink($path); // the client deserializes `object` as an array
$out['download_link'] = $answer['download_link'];
$out['downloaded'] = (string) (new GuzzleHttp\Client())->get($out['download_link'])->getBody();
$out['deleted'] = $api->deleteBaseAsset($path);
try {
    $api->getFileDownloadLink($path);
    $out['after_delete'] = 'found';
} catch (SeaTable\Client\ApiException $e) {
    $out['after_delete'] = $e->getCode();
}
echo json_encode($out), "\n";
