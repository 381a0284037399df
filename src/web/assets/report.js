// Draws the site report's charts from the data-series of each canvas (Chart.js, served by us), in
// the series' colours it carries (the PDF's palette). The current month, reported to date
// (series.partial), is drawn hatched and dashed. Without JavaScript the same numbers are in the
// table under the charts.
(function () {
  'use strict';

  var colors = { grid: '#e1e4e9', text: '#5b6474' };

  /** A fill of light colour with diagonal stripes: a bar whose month is not over yet. */
  function hatched(colour) {
    var tile = document.createElement('canvas');
    tile.width = 8;
    tile.height = 8;
    var context = tile.getContext('2d');
    context.globalAlpha = 0.3;
    context.fillStyle = colour;
    context.fillRect(0, 0, 8, 8);
    context.globalAlpha = 1;
    context.strokeStyle = colour;
    context.lineWidth = 2;
    context.beginPath();
    context.moveTo(-2, 10);
    context.lineTo(10, -2);
    context.moveTo(-2, 2);
    context.lineTo(2, -2);
    context.moveTo(6, 10);
    context.lineTo(10, 6);
    context.stroke();
    return context.createPattern(tile, 'repeat');
  }

  /** A bar colour: hatched for the partial month (scriptable, so the legend keeps the plain colour). */
  function barColour(colour, partial) {
    var pattern = hatched(colour);
    return function (context) {
      return context.dataIndex === partial ? pattern : colour;
    };
  }

  /**
   * Writes the partial month's note ("so far") above its bar or point, where it shows at any width
   * (the month names under the axis are thinned out on a narrow chart).
   */
  function partialNote(partial, note) {
    return {
      id: 'partial-month',
      afterDatasetsDraw: function (chart) {
        if (partial < 0 || !note) return;
        var x;
        var top = Infinity;
        chart.data.datasets.forEach(function (dataset, i) {
          var element = chart.getDatasetMeta(i).data[partial];
          if (!element) return;
          x = element.x;
          top = Math.min(top, element.y);
        });
        if (x === undefined) return;
        var context = chart.ctx;
        context.save();
        context.font = '600 11px ' + window.Chart.defaults.font.family;
        context.fillStyle = colors.text;
        context.textBaseline = 'bottom';
        var half = context.measureText(note).width / 2;
        // Kept inside the canvas (the last month sits at the right edge), on a white halo where it
        // overlaps a neighbouring bar or the line.
        var left = Math.min(Math.max(x, half), chart.width - half);
        context.textAlign = 'center';
        context.lineJoin = 'round';
        context.lineWidth = 4;
        context.strokeStyle = '#ffffff';
        context.strokeText(note, left, top - 6);
        context.fillText(note, left, top - 6);
        context.restore();
      },
    };
  }

  function config(kind, series) {
    var palette = series.colours;
    var partial = typeof series.partial === 'number' ? series.partial : -1;
    var common = {
      locale: series.locale,
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      // Room above the highest bar or point for the partial month's note.
      layout: { padding: { top: partial < 0 ? 0 : 18 } },
      interaction: { mode: 'index', intersect: false },
      plugins: {
        legend: { position: 'bottom', labels: { boxWidth: 12, boxHeight: 12 } },
        tooltip: {
          callbacks: {
            title: function (items) {
              var item = items[0];
              if (!item) return '';
              return item.dataIndex === partial ? item.label + ' (' + series.partialNote + ')' : item.label;
            },
          },
        },
      },
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
            { label: series.legend.industry, data: series.industry, backgroundColor: barColour(palette.industry, partial), borderRadius: 3, stack: 'backlinks' },
            { label: series.legend.local, data: series.local, backgroundColor: barColour(palette.local, partial), borderRadius: 3, stack: 'backlinks' },
          ],
        },
        options: common,
        plugins: [partialNote(partial, series.partialNote)],
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
            borderColor: palette.articles,
            backgroundColor: palette.articles + '24',
            fill: 'origin',
            pointRadius: 3.5,
            // The partial month: a hollow point, reached by a dashed line.
            pointBackgroundColor: function (context) {
              return context.dataIndex === partial ? '#ffffff' : palette.articles;
            },
            pointBorderColor: palette.articles,
            segment: {
              borderDash: function (context) {
                return context.p1DataIndex === partial ? [5, 4] : undefined;
              },
            },
            cubicInterpolationMode: 'monotone',
          },
        ],
      },
      options: common,
      plugins: [partialNote(partial, series.partialNote)],
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
