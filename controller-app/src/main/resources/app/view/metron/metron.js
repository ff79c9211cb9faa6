// Metron view: one ONOS table per org.metron.app.gui.MetronTables.ALL entry, served by MetronViewMessageHandler
// (ONOS table protocol, tag "metron" + table id) and refreshed by the table builder's periodic polling.
(function () {
    'use strict';

    var TABLES = ['Problem', 'Chain', 'Placement', 'Tag', 'Core', 'Nic', 'Group', 'Scaling', 'FlowState', 'BlackBox', 'Rule', 'Class'];

    function table(tag) {
        return ['$scope', 'TableBuilderService', function ($scope, tbs) {
            tbs.buildTable({ scope: $scope, tag: tag });
        }];
    }

    // the view's own controller (ONOS routes view "metron" to OvMetronCtrl); each table has its own
    var module = angular.module('ovMetron', []).controller('OvMetronCtrl', ['$scope', function () {}]);
    TABLES.forEach(function (id) {
        module.controller('OvMetron' + id + 'Ctrl', table('metron' + id));
    });
}());
