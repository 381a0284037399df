// The import page while a file is checked or applied: asks for the progress every second and
// shows it; the page is loaded again once the step is over (or failed), to show its plan or what
// the import did.
(function () {
  'use strict';
  var section = document.querySelector('[data-import-progress]');
  if (!section) return;
  var url = section.getAttribute('data-import-progress');
  var state = section.getAttribute('data-import-state');
  var bar = section.querySelector('progress');
  var text = section.querySelector('[data-progress-text]');

  function poll() {
    fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (response) {
        if (!response.ok) throw new Error('HTTP ' + response.status);
        return response.json();
      })
      .then(function (progress) {
        if (progress.state !== state) {
          window.location.reload();
          return;
        }
        if (text) {
          bar.max = progress.of;
          bar.value = progress.rows;
          text.textContent = progress.rows + ' of ' + progress.of + ' rows written (' + progress.done.articles + ' of ' + progress.total.articles +
            ' articles, ' + progress.done.backlinks + ' of ' + progress.total.backlinks + ' backlinks).';
        }
        setTimeout(poll, 1000);
      })
      .catch(function () {
        setTimeout(poll, 3000);
      });
  }
  setTimeout(poll, 1000);
})();
