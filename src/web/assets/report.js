// Draws the site report's charts from the data-series of each canvas (Chart.js, served by us).
// Without JavaScript the same numbers are in the table under the charts.
(function () {
  'use strict';

  var colors = { industry: '#1d5fa8', local: '#23988b', articles: '#7446b8', grid: '#e1e4e9', text: '#5b6474' };

  function config(kind, series) {
    var common = {
      locale: series.locale,
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: 'index', intersect: false },
      plugins: { legend: { position: 'bottom', labels: { boxWidth: 12, boxHeight: 12 } } },
      scales: {
        x: { stacked: kind === 'backlinks', grid: { display: false } },
        y: { stacked: kind === 'backlinks', beginAtZero: true, ticks: { precision: 0 }, grid: { color: colors.grid } },
      },
    };
    if (kind === 'backlinks') {
      return {
        type: 'bar',
        data: {
          labels: series.labels,
          datasets: [
            { label: series.legend.industry, data: series.industry, backgroundColor: colors.industry, borderRadius: 3, stack: 'backlinks' },
            { label: series.legend.local, data: series.local, backgroundColor: colors.local, borderRadius: 3, stack: 'backlinks' },
          ],
        },
        options: common,
      };
    }
    return {
      type: 'line',
      data: {
        labels: series.labels,
        datasets: [
          {
            label: series.legend.articles,
            data: series.articles,
            borderColor: colors.articles,
            backgroundColor: 'rgba(116, 70, 184, 0.14)',
            fill: 'origin',
            pointRadius: 3.5,
            pointBackgroundColor: colors.articles,
            cubicInterpolationMode: 'monotone',
          },
        ],
      },
      options: common,
    };
  }

  function draw() {
    if (typeof window.Chart !== 'function') return;
    window.Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    window.Chart.defaults.color = colors.text;
    var canvases = document.querySelectorAll('canvas[data-chart]');
    Array.prototype.forEach.call(canvases, function (canvas) {
      var series;
      try {
        series = JSON.parse(canvas.getAttribute('data-series') || '{}');
      } catch (e) {
        return;
      }
      new window.Chart(canvas, config(canvas.getAttribute('data-chart'), series));
      canvas.setAttribute('data-rendered', 'true');
    });
  }

  function printButtons() {
    var buttons = document.querySelectorAll('[data-print]');
    Array.prototype.forEach.call(buttons, function (button) {
      button.hidden = false;
      button.addEventListener('click', function () {
        window.print();
      });
    });
  }

  draw();
  printButtons();
})();
