<?php
// A paywatch webhook receiver in PHP (no extensions beyond the defaults).
//
//   PAYWATCH_WEBHOOK_SECRET=... php -S 127.0.0.1:8000 receiver.php
//
// It accepts a delivery only when its Paywatch-Signature verifies under the
// secret, and only when the signature's timestamp is within 5 minutes of
// now; it answers 2xx to an event id it has already handled without
// handling it again (paywatch delivers at least once). PHP handles each
// request in a fresh process, so the handled ids are kept in a file here;
// keep them where your orders are (a unique key written in the same
// transaction as the order's update).

const TOLERANCE_SECONDS = 300;

function say(string $line): void
{
    file_put_contents('php://stdout', $line . "\n");
}

// verify returns "" when the delivery is genuine, else why not.
function verify(string $secret, string $header, string $body): string
{
    $t = -1;
    $sigs = [];
    foreach (explode(',', $header) as $part) {
        $kv = explode('=', trim($part), 2);
        if (count($kv) !== 2) {
            continue;
        }
        if ($kv[0] === 't') {
            if (!ctype_digit($kv[1])) {
                return 'bad timestamp';
            }
            $t = (int) $kv[1];
        } elseif ($kv[0] === 'v1') {
            $sigs[] = $kv[1];
        }
    }
    if ($t < 0 || !$sigs) {
        return 'no signature';
    }
    if (abs(time() - $t) > TOLERANCE_SECONDS) {
        return 'timestamp outside the 5 minute window';
    }
    $want = hash_hmac('sha256', $t . '.' . $body, $secret);
    foreach ($sigs as $s) {
        if (hash_equals($want, $s)) {
            return '';
        }
    }
    return 'signature does not match';
}

$secret = getenv('PAYWATCH_WEBHOOK_SECRET');
if ($secret === false || $secret === '') {
    http_response_code(500);
    say('set PAYWATCH_WEBHOOK_SECRET (the sandbox writes it to .paywatch/sandbox.env)');
    exit;
}
if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
    http_response_code(405);
    exit;
}
$body = file_get_contents('php://input'); // the raw bytes: verify before parsing
$reason = verify($secret, $_SERVER['HTTP_PAYWATCH_SIGNATURE'] ?? '', $body);
if ($reason !== '') {
    say('refused ' . $reason);
    http_response_code(400);
    echo $reason;
    exit;
}
$ev = json_decode($body, true);
if (!is_array($ev) || empty($ev['id']) || !is_string($ev['id'])) {
    http_response_code(400);
    echo 'not an event';
    exit;
}
// Record the id first, atomically: a file per id, created only if absent.
$dir = getenv('PAYWATCH_WEBHOOK_SEEN_DIR') ?: sys_get_temp_dir() . '/paywatch-webhooks-seen';
@mkdir($dir, 0700, true);
$f = @fopen($dir . '/' . hash('sha256', $ev['id']), 'x');
if ($f === false) {
    say('duplicate ' . $ev['id']);
    http_response_code(200); // handled before: say so, do nothing
    exit;
}
fclose($f);
// Handle the event here (intent.paid: ship the order, ...).
say('accepted ' . $ev['id'] . ' ' . ($ev['type'] ?? ''));
http_response_code(200);
