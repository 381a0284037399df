// The article editor: checks, while you type, that every protected link is still in the body
// exactly as it was (the server checks again on save and refuses otherwise), and counts the
// meta description's characters.
(function () {
  'use strict';

  var body = document.getElementById('body');
  var status = document.getElementById('guard-status');
  if (!body || !status || body.matches(':disabled')) return;

  var links;
  try {
    links = JSON.parse(body.getAttribute('data-protected-links') || '[]');
  } catch (e) {
    links = [];
  }

  function squash(text) {
    return String(text || '').replace(/\s+/g, ' ').trim();
  }
  function keyOf(type, href, text) {
    return type + '\u0000' + href + '\u0000' + squash(text);
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function check() {
    var doc = new DOMParser().parseFromString(body.value, 'text/html');
    var available = {};
    Array.prototype.forEach.call(doc.querySelectorAll('a[data-service-protected]'), function (a) {
      var key = keyOf(a.getAttribute('data-service-protected'), a.getAttribute('href') || '', a.textContent);
      available[key] = (available[key] || 0) + 1;
    });
    var missing = [];
    links.forEach(function (link) {
      var key = keyOf(link.type, link.href, link.text);
      if (available[key]) available[key] -= 1;
      else missing.push(link);
    });
    clear(status);
    status.hidden = false;
    if (missing.length === 0) {
      status.className = 'guard-status ok';
      status.textContent = '✓ All ' + links.length + ' protected ' + (links.length === 1 ? 'link is' : 'links are') + ' intact.';
      return;
    }
    status.className = 'guard-status broken';
    status.appendChild(
      document.createTextNode(
        '⚠ Saving would be refused: ' + missing.length + ' protected ' + (missing.length === 1 ? 'link is' : 'links are') +
          ' missing or changed. Put back:'
      )
    );
    var list = document.createElement('ul');
    missing.forEach(function (link) {
      var item = document.createElement('li');
      item.textContent = '“' + link.text + '” → ' + link.href;
      list.appendChild(item);
    });
    status.appendChild(list);
  }

  if (links.length > 0) {
    var timer;
    body.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(check, 200);
    });
    check();
  }

  var meta = document.getElementById('meta_description');
  var counter = document.querySelector('[data-counter-for="meta_description"]');
  if (meta && counter) {
    var max = Number(meta.getAttribute('maxlength')) || 500;
    var count = function () {
      counter.textContent = '(' + Array.from(meta.value).length + ' of ' + max + ' characters)';
    };
    meta.addEventListener('input', count);
    count();
  }
})();
